//go:build linux

package full

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zalando/go-keyring"
	"golang.org/x/sys/unix"

	"github.com/agentinfra/agentinfra/slack"
)

// openTerminal opens a pseudo-terminal: the master (what a terminal
// emulator reads and writes: the test reads what it would show) and the
// slave (the terminal the command has).
func openTerminal(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}

// `slack login` on a terminal reads the tokens with echo off: what the
// terminal shows (what the master reads back) holds neither token.
func TestSlackLoginDoesNotEchoTheTokens(t *testing.T) {
	keyring.MockInit()
	master, slave := openTerminal(t)
	f, _, stderr := testFactory(t.TempDir(), cliOpts{})
	f.IO.In = slave
	code := make(chan int, 1)
	go func() { code <- run(context.Background(), []string{"slack", "login"}, f) }()
	// Typed once the terminal no longer echoes: both lines at once (each
	// read takes its own line).
	deadline := time.Now().Add(10 * time.Second)
	for {
		tio, err := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
		if err != nil {
			t.Fatal(err)
		}
		if tio.Lflag&unix.ECHO == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the terminal still echoes: the tokens would be shown as they are typed")
		}
		time.Sleep(5 * time.Millisecond)
	}
	master.Write([]byte("xapp-1-secret-app\nxoxb-secret-bot\n"))
	if c := <-code; c != 0 {
		t.Fatalf("code %d: %s", c, stderr)
	}
	fd := int(master.Fd()) // Fd makes the file blocking: once, before SetNonblock
	unix.SetNonblock(fd, true)
	buf := make([]byte, 4096)
	n, _ := unix.Read(fd, buf)
	if shown := string(buf[:max(n, 0)]); strings.Contains(shown, "secret") {
		t.Fatalf("the terminal showed %q", shown)
	}
	tk, err := slack.TokenSource{Getenv: func(string) string { return "" }}.Load(context.Background())
	if err != nil || tk.App != "xapp-1-secret-app" || tk.Bot != "xoxb-secret-bot" {
		t.Fatalf("%+v %v", tk, err)
	}
	if !strings.Contains(stderr.String(), "(not shown)") {
		t.Fatalf("the prompt: %s", stderr)
	}
}
