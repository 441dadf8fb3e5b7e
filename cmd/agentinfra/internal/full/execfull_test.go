package full

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
	"github.com/agentinfra/agentinfra/internal/testing/poll"
)

// agentinfra lists each command of this package with agentinfra-full's own
// one-line help: cli.HeavyCommands is this package's tree, name for name.
func TestHeavyCommandsAreTheFullTreesOwn(t *testing.T) {
	f, _, _ := testFactory(t.TempDir(), cliOpts{})
	want := map[string]string{}
	for _, c := range Commands(f.Factory) {
		want[c.Name()] = c.Short
	}
	got := map[string]string{}
	for _, h := range cli.HeavyCommands {
		got[h.Name] = h.Short
	}
	for name, short := range want {
		if got[name] != short {
			t.Errorf("cli.HeavyCommands: %s is %q, agentinfra-full says %q", name, got[name], short)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("cli.HeavyCommands lists %s, which agentinfra-full does not have", name)
		}
	}
}

// runBin runs bin with args in dir and returns its exit code and streams.
func runBin(t *testing.T, dir string, env []string, bin string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = dir, env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("%s %v: %v", bin, args, err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}

// agentinfra hands this package's commands over to agentinfra-full: the
// command, its --help and `help NAME`, its shell completion (cobra's
// __complete) print what agentinfra-full prints, with its exit code; the
// light commands and the top-level help stay agentinfra's own.
func TestLightBinaryHandsHeavyCommandsOver(t *testing.T) {
	bin := taskBinary(t)
	full := filepath.Join(filepath.Dir(bin), cli.FullBinary)
	root := fixtureWS(t)
	env := []string{"HOME=" + root, "PATH=" + os.Getenv("PATH")}
	for _, args := range [][]string{
		{"inbox", "--help"},
		{"help", "session"},
		{"agent", "list", "--json"},
		{"__complete", "agent", ""},
		{"__complete", "dispatch", ""},
		{"approve", "r999"},
		{"session", "show", "--bogus"},
		{"--root", root, "role", "list"},
	} {
		code, out, errOut := runBin(t, root, env, bin, args...)
		wcode, wout, werr := runBin(t, root, env, full, args...)
		if code != wcode || out != wout || errOut != werr {
			t.Errorf("agentinfra %q: exit %d\n%s\n%s\nagentinfra-full: exit %d\n%s\n%s", args, code, out, errOut, wcode, wout, werr)
		}
		if out == "" && errOut == "" {
			t.Errorf("agentinfra %q printed nothing", args)
		}
	}
	// The top-level help lists every command of agentinfra-full, with its line.
	_, out, _ := runBin(t, root, env, bin, "--help")
	_, wout, _ := runBin(t, root, env, full, "--help")
	if commandList(out) == "" || commandList(out) != commandList(wout) {
		t.Errorf("agentinfra --help lists\n%s\nagentinfra-full --help lists\n%s", commandList(out), commandList(wout))
	}
	// Completing a command name is agentinfra's own: it offers the heavy ones.
	if _, out, _ := runBin(t, root, env, bin, "__complete", "in"); !strings.Contains(out, "inbox\t") || !strings.Contains(out, "init\t") {
		t.Errorf("agentinfra __complete in: %q, want inbox and init", out)
	}
}

// commandList is the "Available Commands" section of a --help.
func commandList(help string) string {
	_, after, _ := strings.Cut(help, "Available Commands:\n")
	list, _, _ := strings.Cut(after, "\n\n")
	return list
}

// The exec of agentinfra-full replaces the process: the process agentinfra
// started is agentinfra-full's, with the same pid (so signals and the exit
// code are its own), and it has no child. A link to agentinfra elsewhere finds
// agentinfra-full next to the file it points to.
func TestLightBinaryBecomesFullBinary(t *testing.T) {
	bin := taskBinary(t)
	root := fixtureWS(t)
	link := filepath.Join(t.TempDir(), "agentinfra")
	if err := os.Symlink(bin, link); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(link, "serve")
	cmd.Dir, cmd.Env = root, []string{"HOME=" + root, "PATH="}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	want, _ := filepath.EvalSymlinks(filepath.Join(filepath.Dir(bin), cli.FullBinary))
	exe := filepath.Join("/proc", strconv.Itoa(cmd.Process.Pid), "exe")
	poll.EventuallyNil(t, func() error {
		if got, _ := os.Readlink(exe); got != want {
			return fmt.Errorf("pid %d runs %q, want %s (agentinfra-full, same pid)", cmd.Process.Pid, got, want)
		}
		return nil
	})
	children, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(cmd.Process.Pid), "task", strconv.Itoa(cmd.Process.Pid), "children"))
	if err == nil && strings.TrimSpace(string(children)) != "" {
		t.Errorf("agentinfra serve has children %q: the exec of agentinfra-full must replace the process", children)
	}
	stdin.Close() // the stdio server ends with its input
	if err := cmd.Wait(); err != nil {
		t.Errorf("serve after its input closed: %v", err)
	}
}

// Without agentinfra-full, neither next to agentinfra nor on PATH, its
// commands fail with the unavailable kind's exit code (6) and say how to
// install it; the light commands still run.
func TestLightBinaryWithoutFullBinary(t *testing.T) {
	src, err := os.ReadFile(taskBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "agentinfra")
	if err := os.WriteFile(bin, src, 0o755); err != nil {
		t.Fatal(err)
	}
	root := fixtureWS(t)
	env := []string{"HOME=" + root, "PATH=" + t.TempDir()}
	for _, args := range [][]string{{"inbox"}, {"agent", "list"}, {"serve", "--help"}} {
		code, out, errOut := runBin(t, root, env, bin, args...)
		if code != 6 || out != "" || !strings.Contains(errOut, "agentinfra-full") || !strings.Contains(errOut, "go install ./cmd/...") {
			t.Errorf("%q without agentinfra-full: exit %d, stdout %q, stderr %q; want 6 and how to install it", args, code, out, errOut)
		}
	}
	if code, out, errOut := runBin(t, root, env, bin, "task", "list", "--status", "TODO"); code != 0 || !strings.Contains(out, "a1b2c3") {
		t.Errorf("task list without agentinfra-full: exit %d %q %q", code, out, errOut)
	}
}

// The exec of agentinfra-full never makes the process look dead: an
// execve from a thread other than the main one first ends the thread-group
// leader, and for that moment /proc/PID/stat says Z — the fleet's reaper
// then took a supervisor in its exec of agentinfra-full for gone and
// interrupted its run (seen under -race). The light binary execs from the
// main thread, so a watcher polling the pid never sees a zombie that comes
// back to life.
func TestLightBinaryExecOfFullNeverLooksDead(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	bin := taskBinary(t)
	root := fixtureWS(t)
	want, _ := filepath.EvalSymlinks(filepath.Join(filepath.Dir(bin), cli.FullBinary))
	for i := range 20 {
		cmd := exec.Command(bin, "serve")
		cmd.Dir, cmd.Env = root, []string{"HOME=" + root, "PATH="}
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		pid := strconv.Itoa(cmd.Process.Pid)
		zombie := false
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
			stat, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
			if err != nil {
				continue
			}
			s := string(stat)
			if j := strings.LastIndexByte(s, ')'); j > 0 && j+2 < len(s) && s[j+2] == 'Z' {
				zombie = true
			}
			if got, _ := os.Readlink(filepath.Join("/proc", pid, "exe")); got == want {
				break
			}
		}
		stdin.Close()
		cmd.Wait()
		if zombie {
			t.Fatalf("run %d: pid %s showed as a zombie during the exec of agentinfra-full", i+1, pid)
		}
	}
}
