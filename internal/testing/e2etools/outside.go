package e2etools

import (
	"os"
	"path/filepath"
	"testing"
)

// OutsideTemp makes a folder under $HOME, removed after the test: outside
// every folder a run's sandbox lets an agent write (unlike t.TempDir(), in
// /tmp, which it may). Its path has no symbolic link in it.
func OutsideTemp(t testing.TB) string {
	t.Helper()
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home folder")
	}
	d, err := os.MkdirTemp(home, ".agentinfra-e2e-")
	if err != nil {
		t.Skipf("cannot make a folder in %s: %v", home, err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	d, _ = filepath.EvalSymlinks(d)
	return d
}
