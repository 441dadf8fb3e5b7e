package full

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/task"
)

func TestConsoleRefusesANonLoopbackAddrWithoutTheFlag(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := runCLI(t, dir, cliOpts{}, "console", "--addr", "0.0.0.0:0")
	if code != 2 || !strings.Contains(stderr, "not loopback") || !strings.Contains(stderr, "--allow-remote") || !strings.Contains(stderr, "approve") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

// TestConsolePrintsALinkThatWorksOnce runs the command as main does: the
// printed link signs a client in once, then is refused.
func TestConsolePrintsALinkThatWorksOnce(t *testing.T) {
	dir := t.TempDir()
	if _, err := task.Init(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	f, stdout, _ := testFactory(dir, cliOpts{Env: map[string]string{"AGENTINFRA_USER": "ana"}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	links := make(chan string, 1)
	cmd := NewCmdConsole(f, func(ctx context.Context, o *ConsoleOptions) error {
		o.Ready = func(u string) { links <- u }
		return consoleRun(ctx, o)
	})
	cmd.SetArgs([]string{})
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	var link string
	select {
	case link = <-links:
	case err := <-done:
		t.Fatalf("console ended: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("console did not start")
	}
	if !strings.HasPrefix(link, "http://127.0.0.1:") || !strings.Contains(link, "/login?token=") {
		t.Fatalf("link %q", link)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for i, want := range []int{http.StatusSeeOther, http.StatusUnauthorized} {
		resp, err := noFollow.Get(link)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("use %d of the link: %s", i+1, resp.Status)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("console: %v", err)
	}
	if !strings.Contains(stdout.String(), link) || !strings.Contains(stdout.String(), "as ana") {
		t.Fatalf("stdout %q", stdout.String())
	}
}
