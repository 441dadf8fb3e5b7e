package console_test

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/console"
	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision"
	"github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// world is a workspace with its store and a console serving it on a
// loopback port, as `agentinfra console` runs it; the person is ana.
type world struct {
	ws   *workspace.Workspace
	st   *store.Store
	svc  *supervision.Service
	srv  *console.Server
	base string // http://127.0.0.1:PORT
	bus  *events.Bus
}

// matrixRows are the fixture's tasks, written the way a person writes them.
const matrixRows = `| ID | Status | Pri | Diff | Mode | Skills | Agents | Description | Created | Updated |
|----|--------|-----|------|------|--------|--------|-------------|---------|---------|
| a1b2c3 | TODO | P2 | med | coder |  |  | Add retry to the fetcher | 2026-01-05 | 2026-01-05 |
| d4e5f6 | IN_PROGRESS | P1 | hard | coder |  | @papi | Make the parser stream | 2026-01-04 | 2026-01-06 |
| 0a0b0c | REVIEW | P3 | easy | reviewer |  | @rev | Document the console | 2026-01-02 | 2026-01-06 |
| 9f8e7d | DONE | P4 | easy | coder |  |  | Pin the linter | 2026-01-01 | 2026-01-03 |
`

type worldOpts struct {
	opts func(*console.Options)
	// defaultPoll keeps the store's default poll interval (the tests poll
	// faster).
	defaultPoll bool
	// git makes the workspace a git repository with the fixture committed
	// on main (the local fleet needs one).
	git bool
	// hosts are other machines' services the console merges.
	hosts []supervision.HostEntry
}

func newWorld(t *testing.T, wo ...worldOpts) *world {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	root := t.TempDir()
	if _, err := task.Init(ctx, root); err != nil {
		t.Fatal(err)
	}
	mp := filepath.Join(root, ".agent", "DEVELOPMENT_MATRIX.md")
	src, err := os.ReadFile(mp)
	if err != nil {
		t.Fatal(err)
	}
	head := string(src[:strings.Index(string(src), "| ID |")])
	if err := os.WriteFile(mp, []byte(head+matrixRows), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, w := range wo {
		if w.git {
			commitAll(t, root)
		}
	}
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	sopts := store.Options{MaxSessions: -1, PollInterval: 20 * time.Millisecond}
	for _, w := range wo {
		if w.defaultPoll {
			sopts.PollInterval = 0
		}
	}
	st, err := store.OpenWorkspace(ctx, ws, sopts)
	if err != nil {
		t.Fatal(err)
	}
	bus := events.New()
	var hosts []supervision.HostEntry
	for _, w := range wo {
		hosts = append(hosts, w.hosts...)
	}
	svc, err := supervision.New(supervision.Options{Store: st, Config: supervision.Config{MaxConcurrentSessions: 50}, Workspace: ws, Bus: bus, Hosts: hosts})
	if err != nil {
		t.Fatal(err)
	}
	o := console.Options{Workspace: ws, Supervision: svc, User: "ana"}
	for _, w := range wo {
		if w.opts != nil {
			w.opts(&o)
		}
	}
	srv, err := console.New(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { console.Serve(ctx, ln, srv); close(done) }()
	t.Cleanup(func() {
		cancel()
		<-done
		svc.Close() // ends its followers of hosts
		st.Close()
	})
	return &world{ws: ws, st: st, svc: svc, srv: srv, base: "http://" + ln.Addr().String(), bus: bus}
}

// login spends a link and returns the session cookie.
func (w *world) login(t *testing.T) *http.Cookie {
	t.Helper()
	c := noRedirect()
	resp, err := c.Get(w.srv.Link(w.base))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, ck := range resp.Cookies() {
		if ck.Name == console.CookieName(strings.TrimPrefix(w.base, "http://")) {
			return ck
		}
	}
	t.Fatalf("login gave no cookie: %s", resp.Status)
	return nil
}

func noRedirect() *http.Client {
	return &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// activeSession is a live session of ana's for cli in the workspace.
func (w *world) activeSession(t *testing.T, cli, agent, taskID string) store.Session {
	t.Helper()
	ctx := context.Background()
	ses, err := w.st.CreateSession(ctx, store.NewSession{Owner: "ana", Workspace: w.ws.Root, CLI: cli, Agent: agent, TaskID: taskID, Title: "supervised " + cli})
	if err != nil {
		t.Fatal(err)
	}
	if ses, err = w.st.SetSessionStatus(ctx, ses.ID, store.Transition{To: store.SessionActive, By: "ana"}); err != nil {
		t.Fatal(err)
	}
	return ses
}

func (w *world) matrixPath() string { return w.ws.MatrixPath() }

// commitAll makes dir a git repository with everything in it committed on
// main.
func commitAll(t *testing.T, dir string) {
	t.Helper()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"config", "user.email", "ana@example.com"},
		{"config", "user.name", "Ana"}, {"add", "-A"}, {"commit", "-q", "-m", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
