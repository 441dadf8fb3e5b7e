package host_test

// A host's session waits and is resumed as this machine's: what it waits
// for is in the local session list (in this machine's IDs), and a resume
// from here is the host's, on its machine.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/fleet/coder/codertest"
	"github.com/agentinfra/agentinfra/internal/waiting"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision"
)

func TestAHostsSessionWaitingForARequestShowsWaitingHere(t *testing.T) {
	srv := codertest.New(t)
	papi := newMachine(t, supervision.Options{})
	papi.serve(t, srv, "papi")
	ses := papi.live(t, "papi", store.ModeLocal)
	r := papi.ask(t, ses, "go test ./...")
	me := local(t, srv, supervision.Options{}, "papi")
	mine := me.live(t, "", store.ModeLocal)
	sid, rid := supervision.HostIDBase+ses.ID, supervision.HostIDBase+r.ID

	view := func() (here, there supervision.SessionView) {
		t.Helper()
		vs, err := me.svc.SessionViews(t.Context(), supervision.SessionFilter{Statuses: supervision.LiveStatuses})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vs {
			switch v.ID {
			case mine.ID:
				here = v
			case sid:
				there = v
			}
		}
		if there.ID != sid || there.Host != "papi" {
			t.Fatalf("papi's session %d is not listed as session %d of papi: %+v", ses.ID, sid, vs)
		}
		return here, there
	}
	here, there := view()
	if here.Waiting != nil {
		t.Errorf("this machine's session waits for nothing, but says %+v", here.Waiting)
	}
	w := there.Waiting
	if w == nil {
		t.Fatalf("papi's session waits for request %d, but the list says it waits for nothing", r.ID)
	}
	if w.Kind != waiting.KindRequest || w.ID != rid || w.Ref != fmt.Sprint(rid) || w.What != "Run go test ./..." || !w.Since.Equal(r.CreatedAt) {
		t.Errorf("what papi's session waits for, here: %+v", *w)
	}
	// As session list shows it, and the ID it names decides it here.
	if got, want := w.Summary(r.CreatedAt.Add(2*time.Minute)), fmt.Sprintf("waiting: request %d, 2m", rid); got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
	if all, err := me.svc.Waiting(t.Context()); err != nil || all[sid].ID != rid || len(all) != 1 {
		t.Errorf("Waiting: %+v %v", all, err)
	}

	if _, err := me.svc.Decide(t.Context(), ana, supervision.Decision{Request: w.ID, Approve: true}); err != nil {
		t.Fatal(err)
	}
	if _, there := view(); there.Waiting != nil {
		t.Errorf("request %d was approved, but papi's session still waits for %+v", rid, there.Waiting)
	}
	if all, err := me.svc.Waiting(t.Context()); err != nil || len(all) != 0 {
		t.Errorf("Waiting after the decision: %+v %v", all, err)
	}
}

// resumer is a host's Resumer that reopens the session in the host's
// store as the real one does, without starting a CLI: it records what it
// was asked.
type resumer struct {
	mu    sync.Mutex
	calls []string // "session by"
}

func (f *resumer) resume(ctx context.Context, st *store.Store, ses supervision.Session, by string) (supervision.Resumed, error) {
	f.mu.Lock()
	f.calls = append(f.calls, fmt.Sprintf("%d %s", ses.ID, by))
	f.mu.Unlock()
	me := os.Getpid()
	reopened, err := st.ReopenSession(ctx, ses.ID, store.Reopen{By: by, Reason: "resumed by " + by, Supervisor: store.Supervisor{PID: me}})
	if err != nil {
		return supervision.Resumed{}, err
	}
	return supervision.Resumed{Session: reopened, RunID: ses.RunID, Supervisor: me}, nil
}

func (f *resumer) called() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

// interrupted makes a session of ana's run runID whose supervisor died.
func (m *machine) interrupted(t testing.TB, runID string) store.Session {
	t.Helper()
	ctx := context.Background()
	ses, err := m.st.CreateSession(ctx, store.NewSession{Owner: "ana", Workspace: m.ws.Root, CLI: "claude", Agent: "papi", RunID: runID, Mode: store.ModeLocal})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.st.SetSessionStatus(ctx, ses.ID, store.Transition{To: store.SessionActive, By: "ana"}); err != nil {
		t.Fatal(err)
	}
	if ses, err = m.st.SetSessionStatus(ctx, ses.ID, store.Transition{To: store.SessionInterrupted, By: store.ActorAgentinfra, Reason: "the supervisor died"}); err != nil {
		t.Fatal(err)
	}
	return ses
}

// resumingHost is workspace papi, whose service resumes with its Resumer
// fake, and this machine with papi as its host 1.
func resumingHost(t *testing.T) (fake *resumer, papi, me *machine) {
	t.Helper()
	srv := codertest.New(t)
	fake = &resumer{}
	papi = newMachine(t, supervision.Options{Resume: fake.resume})
	papi.serve(t, srv, "papi")
	return fake, papi, local(t, srv, supervision.Options{}, "papi")
}

func TestAHostsInterruptedSessionIsResumedByTheHost(t *testing.T) {
	fake, papi, me := resumingHost(t)
	ses := papi.interrupted(t, "run-1")
	sid := supervision.HostIDBase + ses.ID
	sub := me.bus.Subscribe(events.Filter{Kinds: []events.Kind{events.SessionChanged}}, 0)
	defer sub.Close()

	// Listed here as resumable, as a local one.
	got, err := me.svc.Session(t.Context(), sid)
	if err != nil || !supervision.Resumable(got) {
		t.Fatalf("papi's interrupted session, here: %+v %v", got, err)
	}
	r, err := me.svc.Resume(t.Context(), ana, sid)
	if err != nil {
		t.Fatal(err)
	}
	if r.Session.ID != sid || r.Session.Host != "papi" || !r.Restarted || r.RunID != "run-1" || r.Supervisor != os.Getpid() || r.Session.Status != store.SessionCreated {
		t.Errorf("resumed: %+v", r)
	}
	if calls := fake.called(); len(calls) != 1 || calls[0] != fmt.Sprintf("%d ana", ses.ID) {
		t.Fatalf("papi's Resumer was asked %q, want once for its session %d by ana", calls, ses.ID)
	}
	if there, _ := papi.st.Session(t.Context(), ses.ID); there.Status != store.SessionCreated {
		t.Errorf("papi's store: the session is %s", there.Status)
	}
	if e, ok := sub.TryNext(); !ok || e.SessionID != sid || !strings.Contains(e.Text, "resumed by") {
		t.Errorf("this machine's bus: %+v %v", e, ok)
	}

	// Resumed already (its run goes on): refused here, in this machine's
	// ID, and the host's Resumer is not asked again.
	_, err = me.svc.Resume(t.Context(), ana, sid)
	if agenterr.KindOf(err) != agenterr.Conflict || !errors.Is(err, supervision.ErrBadTransition) ||
		!strings.Contains(err.Error(), fmt.Sprintf("session %d is created", sid)) {
		t.Errorf("a second resume: %v", err)
	}
	if n := len(fake.called()); n != 1 {
		t.Errorf("papi's Resumer was asked %d times", n)
	}
}

func TestAResumeOfAHostsSessionIsRefusedAsTheHostRefusesIt(t *testing.T) {
	fake, papi, me := resumingHost(t)
	ses := papi.interrupted(t, "run-1")
	active := papi.live(t, "papi", store.ModeLocal)

	// bo is neither its owner nor an operator on papi.
	_, err := me.svc.Resume(t.Context(), supervision.Person("bo", supervision.SurfaceTerminal), supervision.HostIDBase+ses.ID)
	if agenterr.KindOf(err) != agenterr.Forbidden || !errors.Is(err, supervision.ErrNotAllowed) {
		t.Errorf("bo's resume: %v", err)
	}
	// A live session is not resumed.
	_, err = me.svc.Resume(t.Context(), ana, supervision.HostIDBase+active.ID)
	if agenterr.KindOf(err) != agenterr.Conflict || !errors.Is(err, supervision.ErrBadTransition) ||
		!strings.Contains(err.Error(), fmt.Sprintf("session %d is active", supervision.HostIDBase+active.ID)) {
		t.Errorf("resume of an active session: %v", err)
	}
	// A session papi does not have, and a host this machine does not know.
	if _, err := me.svc.Resume(t.Context(), ana, supervision.HostIDBase+999); agenterr.KindOf(err) != agenterr.NotFound ||
		!strings.Contains(err.Error(), "papi") {
		t.Errorf("resume of papi's session 999: %v", err)
	}
	if _, err := me.svc.Resume(t.Context(), ana, 7*supervision.HostIDBase+1); agenterr.KindOf(err) != agenterr.NotFound {
		t.Errorf("resume of a session of host 7: %v", err)
	}
	if calls := fake.called(); len(calls) != 0 {
		t.Errorf("papi's Resumer was asked %q for refused resumes", calls)
	}
	if there, _ := papi.st.Session(t.Context(), ses.ID); there.Status != store.SessionInterrupted {
		t.Errorf("refused, but papi's session is %s", there.Status)
	}
	// A paused session goes on, as here: no restart.
	if _, err := papi.svc.MoveSession(t.Context(), ana, active.ID, store.SessionPaused, ""); err != nil {
		t.Fatal(err)
	}
	r, err := me.svc.Resume(t.Context(), ana, supervision.HostIDBase+active.ID)
	if err != nil || r.Restarted || r.Session.Status != store.SessionActive || r.Session.ID != supervision.HostIDBase+active.ID {
		t.Errorf("resume of a paused session: %+v %v", r, err)
	}
	if calls := fake.called(); len(calls) != 0 {
		t.Errorf("papi's Resumer was asked %q for a paused session", calls)
	}
}
