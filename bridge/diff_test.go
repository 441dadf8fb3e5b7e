//go:build linux

package bridge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// An edit's diff reads the file the agent names only if it is a regular
// file of bounded size: a FIFO with no writer (it blocked the reader of
// claude's output for good), /dev/zero (endless) or a 65 MiB file give a
// one-line diff saying why there is none, at once; a regular file and a
// new one are diffed.
func TestEditDiffReadsOnlyABoundedRegularFile(t *testing.T) {
	root := t.TempDir()
	if err := unix.Mkfifo(filepath.Join(root, "pipe"), 0o600); err != nil {
		t.Fatal(err)
	}
	big, err := os.Create(filepath.Join(root, "big.txt"))
	if err != nil {
		t.Fatal(err)
	}
	big.Truncate(MaxEditFileBytes + 1) // sparse: nothing written
	big.Close()
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("one\ntwo\n"), 0o644)
	old := "two"
	for _, c := range []struct{ file, want string }{
		{"pipe", "agentinfra shows no diff of this edit: not a regular file: " + filepath.Join(root, "pipe") + " is a FIFO (named pipe)\n"},
		{"/dev/zero", "agentinfra shows no diff of this edit: not a regular file: /dev/zero is a device\n"},
		{"big.txt", "agentinfra shows no diff of this edit: file too large: " + filepath.Join(root, "big.txt") + " is 67108865 bytes, over the limit of 67108864 bytes\n"},
	} {
		if got := EditDiff(root, c.file, &old, "2", false); got != c.want {
			t.Errorf("%s: %q, want %q", c.file, got, c.want)
		}
	}
	if got := EditDiff(root, "a.txt", &old, "2", false); !strings.Contains(got, "-two\n+2\n") {
		t.Errorf("a regular file: %q", got)
	}
	if got := EditDiff(root, "new.txt", nil, "fresh\n", false); !strings.Contains(got, "+fresh\n") {
		t.Errorf("a new file: %q", got)
	}
}
