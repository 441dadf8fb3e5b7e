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
// new one are diffed. (/dev/zero is outside the worktree: never read.)
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

// The content of a file outside the worktree (named so, or through a
// symlink) or of a secrets file never reaches an edit's diff — a request
// shown in the inbox, the console and Slack: the diff is the edit's own
// text under a line saying why.
func TestEditDiffNeverShowsAFileOutsideTheWorktreeOrASecret(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	const secretText = "aws_secret_access_key = SECRET-7f3a"
	os.WriteFile(filepath.Join(outside, "credentials"), []byte("[default]\n"+secretText+"\n"), 0o600)
	os.Symlink(outside, filepath.Join(root, "docs"))
	os.WriteFile(filepath.Join(root, ".env"), []byte("TOKEN=SECRET-7f3a\n"), 0o600)
	old := "[default]"
	for _, file := range []string{filepath.Join(outside, "credentials"), "docs/credentials", "../" + filepath.Base(outside) + "/credentials"} {
		got := EditDiff(root, file, &old, "[work]", false)
		if strings.Contains(got, "SECRET-7f3a") || !strings.Contains(got, "it is outside the worktree") || !strings.Contains(got, "-[default]\n") || !strings.Contains(got, "+[work]\n") {
			t.Errorf("%s: %q", file, got)
		}
		if got := EditDiff(root, file, nil, "whole new\n", false); strings.Contains(got, "SECRET-7f3a") || !strings.Contains(got, "+whole new\n") {
			t.Errorf("%s (a Write): %q", file, got)
		}
	}
	tok := "TOKEN=SECRET-7f3a"
	if got := EditDiff(root, ".env", &tok, "TOKEN=x", false); strings.Count(got, "SECRET-7f3a") != 1 || !strings.Contains(got, "it is a secrets file") {
		// The agent's own old text is shown (it wrote it); the file is not read.
		t.Errorf(".env: %q", got)
	}
}
