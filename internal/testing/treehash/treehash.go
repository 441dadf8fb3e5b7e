// Package treehash snapshots a folder tree (paths, kinds, modes, contents) so
// tests can prove that a failed operation left a workspace byte-identical.
package treehash

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Tree maps each slash-separated path under the root to "kind mode sha256".
type Tree map[string]string

// Snapshot walks root and records every file, folder and symlink.
func Snapshot(root string) (Tree, error) {
	t := Tree{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			t[rel] = "symlink " + target
		case d.IsDir():
			t[rel] = fmt.Sprintf("dir %v", info.Mode().Perm())
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			t[rel] = fmt.Sprintf("file %v %s", info.Mode().Perm(), hex.EncodeToString(sum[:]))
		}
		return nil
	})
	return t, err
}

// Sum is one hash over the whole tree.
func (t Tree) Sum() string {
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		fmt.Fprintf(h, "%s\x00%s\n", k, t[k])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Diff lists what differs between a and b ("" when identical).
func Diff(a, b Tree) string {
	var out []string
	for k, v := range a {
		if w, ok := b[k]; !ok {
			out = append(out, "removed "+k)
		} else if w != v {
			out = append(out, "changed "+k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, "added "+k)
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// TB is the part of testing.TB that Unchanged needs.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Errorf(format string, args ...any)
}

// Guard snapshots root now; calling the returned func fails the test if the
// tree changed since.
func Guard(t TB, root string) func() {
	t.Helper()
	before, err := Snapshot(root)
	if err != nil {
		t.Fatalf("snapshot %s: %v", root, err)
	}
	return func() {
		t.Helper()
		after, err := Snapshot(root)
		if err != nil {
			t.Fatalf("snapshot %s: %v", root, err)
		}
		if before.Sum() != after.Sum() {
			t.Errorf("workspace changed although the operation failed:\n%s", Diff(before, after))
		}
	}
}
