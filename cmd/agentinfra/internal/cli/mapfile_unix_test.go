//go:build unix

package cli

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestReadFileMappedReturnsTheFileBytes(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string][]byte{
		"empty": {},
		"small": []byte("| ID | Status |\n|---|---|\n| 3fa9c1 | TODO |\n"),
		"large": bytes.Repeat([]byte("| 3fa9c1 | TODO | P2 | med | coder | | | Row text \\| with a pipe | 2026-01-20 | 2026-01-23 |\n"), 4000),
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := readFileMapped(path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(got, content) {
			t.Errorf("%s: got %d bytes, want the file's %d", name, len(got), len(content))
		}
		if name == "large" && cap(got) != len(got) {
			t.Errorf("%s: cap %d > len %d: an append would write into the mapping", name, cap(got), len(got))
		}
	}
	if _, err := readFileMapped(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: got %v, want ErrNotExist", err)
	}
}

// Another program truncating the matrix in place while a command reads it
// must end in a clear error, not a crash with a goroutine dump.
func TestReadFileMappedTruncatedWhileReadIsAnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "DEVELOPMENT_MATRIX.md")
	if err := os.WriteFile(path, bytes.Repeat([]byte("| 3fa9c1 | TODO |\n"), 20000), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := readFileMapped(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	var got error
	func() {
		defer func() {
			r := recover()
			var ok bool
			if got, ok = mappedFault(r); !ok && r != nil {
				t.Fatalf("a fault in the mapping was not recognised: %v", r)
			}
		}()
		sink = b[len(b)-1]
	}()
	if !errors.Is(got, errFileShrank) {
		t.Fatalf("reading a truncated mapping: got %v, want errFileShrank", got)
	}
}

var sink byte
