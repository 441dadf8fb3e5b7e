package task

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// subdirNames lists every entry of a folder too large for one read, and isDir
// keeps exactly the folders os.ReadDir calls folders: no files, no symlinks
// (even to a folder).
func TestSubdirNamesListsTheFoldersOnly(t *testing.T) {
	dir := t.TempDir()
	var want []string
	for i := range 3000 { // ~100 KB of entries: several reads
		name := fmt.Sprintf("%06x_task-%d", i*7919%0xffffff, i)
		if i%500 == 0 {
			name += "-ünïcode-and-a-much-longer-slug-than-the-others"
		}
		if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		want = append(want, name)
	}
	for _, f := range []string{"README.md", "a1b2c3_notes.md", ".hidden"} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(dir, want[0]), filepath.Join(dir, "ffffff_link-to-folder")); err != nil {
		t.Fatal(err)
	}
	names, err := subdirNames(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != len(want)+4 {
		t.Errorf("subdirNames gave %d names, want all %d entries", len(names), len(want)+4)
	}
	var got []string
	for _, name := range names {
		if isDir(dir, name) {
			got = append(got, name)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("got %d names, want the %d folders; first difference near %v", len(got), len(want), firstDiff(got, want))
	}
	if _, err := subdirNames(filepath.Join(dir, "missing")); !os.IsNotExist(err) {
		t.Errorf("a missing folder: got %v, want a not-exist error", err)
	}
}

func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return a[i] + " vs " + b[i]
		}
	}
	return "the end"
}
