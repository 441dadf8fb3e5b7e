package coder_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/fleet/coder"
	"github.com/agentinfra/agentinfra/fleet/coder/codertest"
)

// eventStream follows app's events in the background until the test
// cancels it; err receives AgentEvents' result.
type eventStream struct {
	events chan coder.AgentEvent
	err    chan error
	cancel context.CancelFunc
}

func followEvents(t *testing.T, c *coder.Client, app coder.App) *eventStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &eventStream{events: make(chan coder.AgentEvent, 64), err: make(chan error, 1), cancel: cancel}
	t.Cleanup(cancel)
	go func() {
		s.err <- c.AgentEvents(ctx, app, func(ev coder.AgentEvent) bool {
			select {
			case s.events <- ev:
				return true
			case <-ctx.Done():
				return false
			}
		})
	}()
	return s
}

func (s *eventStream) next(t *testing.T) coder.AgentEvent {
	t.Helper()
	select {
	case ev := <-s.events:
		return ev
	case err := <-s.err:
		t.Fatalf("the stream ended: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("no event within 5 s")
	}
	return coder.AgentEvent{}
}

func (s *eventStream) wantMessage(t *testing.T, id int, role, text string) {
	t.Helper()
	ev := s.next(t)
	m := ev.MessageUpdate
	if ev.Type != coder.EventMessageUpdate || m == nil || m.ID != id || m.Role != role || m.Message != text || m.Time.IsZero() {
		t.Fatalf("got %s %s, want message_update %d %s %q", ev.Type, ev.Data, id, role, text)
	}
}

func (s *eventStream) wantStatus(t *testing.T, status string) {
	t.Helper()
	ev := s.next(t)
	if ev.Type != coder.EventStatusChange || ev.StatusChange == nil || ev.StatusChange.Status != status ||
		ev.StatusChange.AgentType != "claude" {
		t.Fatalf("got %s %s, want status_change %s", ev.Type, ev.Data, status)
	}
}

// agentEventsFlow: a stream opened on a ready agent replays the
// conversation and the status, then shows a message's run (running, the
// message, the answer, stable) and an interrupt (stable) as they happen.
func agentEventsFlow(t *testing.T, srv *codertest.Server) {
	ctx := context.Background()
	c := newClient(t, srv)
	ws := createAgent(t, ctx, c, srv, "papi")
	app, _, _ := coder.FindApp(ws, coder.DefaultAgentAPISlug)
	s := followEvents(t, c, app)
	s.wantMessage(t, 0, "user", "Keep the API tests green")
	s.wantMessage(t, 1, "agent", "Done: Keep the API tests green")
	s.wantStatus(t, coder.AgentAPIStable)

	if err := c.SendMessage(ctx, app, coder.AgentMessage{Type: coder.MessageUser, Content: "fix the flaky test"}); err != nil {
		t.Fatal(err)
	}
	s.wantStatus(t, coder.AgentAPIRunning)
	s.wantMessage(t, 2, "user", "fix the flaky test")
	srv.Advance()
	s.wantMessage(t, 3, "agent", "Done: fix the flaky test")
	s.wantStatus(t, coder.AgentAPIStable)

	if err := c.SendMessage(ctx, app, coder.AgentMessage{Type: coder.MessageUser, Content: "and another"}); err != nil {
		t.Fatal(err)
	}
	s.wantStatus(t, coder.AgentAPIRunning)
	s.wantMessage(t, 4, "user", "and another")
	if err := c.SendMessage(ctx, app, coder.AgentMessage{Type: coder.MessageRaw, Content: coder.Interrupt}); err != nil {
		t.Fatal(err)
	}
	s.wantStatus(t, coder.AgentAPIStable)
	// Nothing moves any more: the next event is the end of the stream.
	srv.Advance()
	s.cancel()
	select {
	case ev := <-s.events:
		t.Fatalf("an event after the interrupt: %s %s", ev.Type, ev.Data)
	case err := <-s.err:
		if !errors.Is(err, context.Canceled) || coder.KindOf(err) != coder.KindUnavailable {
			t.Fatalf("a cancelled stream: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancelling did not end the stream")
	}
	if srv.Requests(codertest.RouteAppEvents) != 1 {
		t.Errorf("%d event requests, want 1", srv.Requests(codertest.RouteAppEvents))
	}
}

func TestAgentEventsPathApp(t *testing.T) { agentEventsFlow(t, codertest.New(t)) }

func TestAgentEventsSubdomainApp(t *testing.T) {
	agentEventsFlow(t, codertest.New(t, codertest.WithSubdomainApps()))
}

// TestAgentEventsUntilFnSaysStop: fn returning false ends the stream with
// no error, and the fake forgets the stream.
func TestAgentEventsUntilFnSaysStop(t *testing.T) {
	ctx := context.Background()
	srv := codertest.New(t)
	c := newClient(t, srv)
	app, _, _ := coder.FindApp(createAgent(t, ctx, c, srv, "papi"), coder.DefaultAgentAPISlug)
	var seen []string
	err := c.AgentEvents(ctx, app, func(ev coder.AgentEvent) bool {
		seen = append(seen, ev.Type)
		return ev.Type != coder.EventStatusChange
	})
	if err != nil || len(seen) != 3 || seen[2] != coder.EventStatusChange {
		t.Fatalf("%v, %v", seen, err)
	}
	// The fake still serves messages after the client left.
	if err := c.SendMessage(ctx, app, coder.AgentMessage{Type: coder.MessageUser, Content: "more"}); err != nil {
		t.Fatal(err)
	}
}

// TestAgentEventsEndWithTheWorkspace: stopping the workspace takes its
// AgentAPI away; the open stream ends with an error that says so.
func TestAgentEventsEndWithTheWorkspace(t *testing.T) {
	ctx := context.Background()
	srv := codertest.New(t)
	c := newClient(t, srv)
	ws := createAgent(t, ctx, c, srv, "papi")
	app, _, _ := coder.FindApp(ws, coder.DefaultAgentAPISlug)
	s := followEvents(t, c, app)
	for i := 0; i < 3; i++ {
		s.next(t)
	}
	if _, err := c.CreateBuild(ctx, ws.ID, coder.TransitionStop); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-s.err:
		wantKind(t, err, coder.KindUnavailable, "ended", "workspace stopped")
	case <-time.After(5 * time.Second):
		t.Fatal("the stream outlived the workspace's AgentAPI")
	}
	// Following it again says the agent is not there (502), as for status.
	err := c.AgentEvents(ctx, app, func(coder.AgentEvent) bool { return true })
	wantKind(t, err, coder.KindUnavailable, "502")
}

// TestAgentEventsErrors: the events route fails as the other app routes
// do: 404 for no such workspace, 303 to /login for a bad token, 502 while
// the agent is not ready, injected 5xx and timeouts.
func TestAgentEventsErrors(t *testing.T) {
	ctx := context.Background()
	srv := codertest.New(t)
	c := newClient(t, srv)
	forever := func(coder.AgentEvent) bool { return true }
	ghost := coder.App{Owner: srv.Owner, Workspace: "ghost", Agent: codertest.AgentName, Slug: coder.DefaultAgentAPISlug}
	wantKind(t, c.AgentEvents(ctx, ghost, forever), coder.KindNotFound)

	ws := createAgent(t, ctx, c, srv, "papi")
	app, _, _ := coder.FindApp(ws, coder.DefaultAgentAPISlug)
	other := srv.Config()
	other.Token = "expired"
	stale, _ := coder.New(other)
	ce := wantKind(t, stale.AgentEvents(ctx, app, forever), coder.KindNotAuthenticated, "login")
	if ce.Status != http.StatusSeeOther {
		t.Errorf("status %d", ce.Status)
	}
	srv.SetFault(codertest.RouteAppEvents, codertest.FaultLoginRedirect)
	wantKind(t, c.AgentEvents(ctx, app, forever), coder.KindNotAuthenticated, "CODER_SESSION_TOKEN")
	srv.SetFault(codertest.RouteAppEvents, codertest.Fault5xx)
	wantKind(t, c.AgentEvents(ctx, app, forever), coder.KindUnavailable, "503")

	cfg := srv.Config()
	cfg.Timeout = 200 * time.Millisecond
	quick, _ := coder.New(cfg)
	srv.SetFault(codertest.RouteAppEvents, codertest.FaultTimeout)
	wantKind(t, quick.AgentEvents(ctx, app, forever), coder.KindUnavailable, "did not answer") // only the timeout ends it
	srv.SetFault(codertest.RouteAppEvents, codertest.NoFault)

	// The client's timeout bounds the wait for the answer, not the
	// stream: a quiet stream outlives it.
	s := followEvents(t, quick, app)
	for i := 0; i < 3; i++ {
		s.next(t)
	}
	time.Sleep(400 * time.Millisecond)
	if err := c.SendMessage(ctx, app, coder.AgentMessage{Type: coder.MessageUser, Content: "later"}); err != nil {
		t.Fatal(err)
	}
	s.wantStatus(t, coder.AgentAPIRunning)

	if _, err := c.CreateBuild(ctx, ws.ID, coder.TransitionStop); err != nil {
		t.Fatal(err)
	}
	srv.Settle()
	wantKind(t, c.AgentEvents(ctx, app, forever), coder.KindUnavailable, "502")
}
