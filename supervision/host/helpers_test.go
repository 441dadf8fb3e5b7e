package host_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/fleet/coder"
	"github.com/agentinfra/agentinfra/fleet/coder/codertest"
	"github.com/agentinfra/agentinfra/internal/httpguard"
	"github.com/agentinfra/agentinfra/internal/testing/poll"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision"
	"github.com/agentinfra/agentinfra/supervision/host"
	"github.com/agentinfra/agentinfra/workspace"
)

// machine is one agentinfra's workspace, store and supervision service: a
// host's inside its (fake) Coder workspace, or the person's own.
type machine struct {
	ws  *workspace.Workspace
	st  *store.Store
	svc *supervision.Service
	bus *events.Bus
}

func newMachine(t testing.TB, o supervision.Options) *machine {
	t.Helper()
	root := t.TempDir()
	git(t, root, "init", "-q", "-b", "main")
	if err := os.MkdirAll(filepath.Join(root, ".agent"), 0o755); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	cfg := t.TempDir()
	ws.Getenv = func(k string) string {
		if k == "AGENTINFRA_CONFIG_DIR" {
			return cfg
		}
		return ""
	}
	st, err := store.OpenWorkspace(context.Background(), ws, store.Options{PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	m := &machine{ws: ws, st: st, bus: events.New()}
	o.Store, o.Workspace, o.Bus = st, ws, m.bus
	if m.svc, err = supervision.New(o); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.svc.Close() })
	return m
}

func git(t testing.TB, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// live makes a live session of ana's, in mode.
func (m *machine) live(t testing.TB, agent, mode string) store.Session {
	t.Helper()
	ctx := context.Background()
	ses, err := m.st.CreateSession(ctx, store.NewSession{Owner: "ana", Workspace: m.ws.Root, CLI: "claude", Agent: agent, Mode: mode})
	if err != nil {
		t.Fatal(err)
	}
	if ses, err = m.st.SetSessionStatus(ctx, ses.ID, store.Transition{To: store.SessionActive, By: "ana"}); err != nil {
		t.Fatal(err)
	}
	return ses
}

// ask raises a pending request in session ses.
func (m *machine) ask(t testing.TB, ses store.Session, command string) store.Request {
	t.Helper()
	r, err := m.st.RaiseRequest(context.Background(), store.NewRequest{SessionID: ses.ID, Kind: store.KindCommand, Tool: "Bash",
		Command: command, Title: "Run " + command, Risk: store.RiskHigh})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// hostToken is every test host's token.
const hostToken = "host-token-of-the-tests"

// slug is the host app's.
const slug = coder.DefaultHostAppSlug

// serve makes workspace name in the fake Coder, with m's service as its
// agentinfra host app (behind its token, as `agent host` serves it).
func (m *machine) serve(t testing.TB, srv *codertest.Server, name string) {
	t.Helper()
	if _, err := srv.AddReadyWorkspace("me", name, "agents", ""); err != nil {
		t.Fatal(err)
	}
	h := httpguard.Handler(host.Handler(m.svc, host.ServerOptions{Name: name}), httpguard.Options{Token: hostToken, AnyHost: true})
	if err := srv.SetApp(name, codertest.AppOptions{Slug: slug, DisplayName: "agentinfra"}, h); err != nil {
		t.Fatal(err)
	}
}

// clientOf is a client of workspace name's host through the fake's proxy.
func clientOf(t testing.TB, srv *codertest.Server, name string, o host.Options) *host.Client {
	t.Helper()
	c, err := coder.New(srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	ws, err := c.WorkspaceByOwnerAndName(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	app, _, ok := coder.FindApp(ws, slug)
	if !ok {
		t.Fatalf("workspace %s has no app %s", name, slug)
	}
	root, hdr, hc, err := c.AppRoot(context.Background(), app)
	if err != nil {
		t.Fatal(err)
	}
	o.Name, o.URL, o.Header, o.HTTPClient = name, root, hdr, hc
	if o.Token == "" {
		o.Token = hostToken
	}
	hc2, err := host.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return hc2
}

// local is the person's machine, with the fake's workspaces names as its
// hosts, numbered from 1.
func local(t testing.TB, srv *codertest.Server, o supervision.Options, names ...string) *machine {
	t.Helper()
	for i, n := range names {
		o.Hosts = append(o.Hosts, supervision.HostEntry{Number: int64(i + 1), Host: clientOf(t, srv, n, host.Options{})})
	}
	return newMachine(t, o)
}

// dropFor is how long the tests drop a host's connections: short by
// default, the 30 s with AGENTINFRA_STRESS=1.
func dropFor() time.Duration {
	if os.Getenv("AGENTINFRA_STRESS") == "1" {
		return 30 * time.Second
	}
	return time.Second
}

// eventually waits until ok holds (poll's guard fails the test).
func eventually(t testing.TB, what string, ok func() bool) {
	t.Helper()
	poll.Eventually(t, ok, "waiting until %s", what)
}
