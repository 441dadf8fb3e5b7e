package testbin

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The key changes with any source or embedded file, not with a test file.
func TestSourceKey(t *testing.T) {
	root := t.TempDir()
	write := func(rel, s string) {
		t.Helper()
		os.MkdirAll(filepath.Dir(filepath.Join(root, rel)), 0o755)
		if err := os.WriteFile(filepath.Join(root, rel), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	key := func() string {
		t.Helper()
		k, err := sourceKey(root)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	write("go.mod", "module x\n")
	write("a/a.go", "package a\n")
	k0 := key()
	write("a/a_test.go", "package a\n")
	write(".git/HEAD", "ref: x\n")
	if key() != k0 {
		t.Error("a test file or .git changed the key")
	}
	write("a/web/page.html", "<p>")
	k1 := key()
	if k1 == k0 {
		t.Error("an embedded file did not change the key")
	}
	write("a/a.go", "package a // edited\n")
	if key() == k1 {
		t.Error("an edited source did not change the key")
	}
}

// The programs are built and run.
func TestPath(t *testing.T) {
	bin := Path(t, Agentinfra)
	if _, err := os.Stat(filepath.Join(filepath.Dir(bin), AgentinfraFull)); err != nil {
		t.Fatalf("agentinfra-full is not beside agentinfra: %v", err)
	}
	if out, err := exec.Command(bin, "--help").CombinedOutput(); err != nil {
		t.Fatalf("agentinfra --help: %v\n%s", err, out)
	}
	stub := exec.Command(Path(t, Stub))
	stub.Env = append(os.Environ(), "STUB_MODE=crash", "STUB_EXIT=7")
	if err := stub.Run(); stub.ProcessState == nil || stub.ProcessState.ExitCode() != 7 {
		t.Fatalf("the stub in crash mode: %v, want exit 7", err)
	}
	if Path(t, Agentinfra) != bin {
		t.Error("a second Path built again")
	}
}
