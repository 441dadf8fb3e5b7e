package host_test

// The supervision service across machines, in process: hosts serve their
// own store's service behind the fake Coder's app proxy (path apps, with
// the host's token and the Coder session token), and the person's service
// merges them, forwards changes to them, and follows their audit logs
// through drops of the proxy.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/fleet/coder"
	"github.com/agentinfra/agentinfra/fleet/coder/codertest"
	"github.com/agentinfra/agentinfra/internal/testing/poll"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision"
	"github.com/agentinfra/agentinfra/supervision/host"
)

var ana = supervision.Person("ana", supervision.SurfaceTerminal)

func TestInboxMergesTheHostsItemsWithTheirNames(t *testing.T) {
	srv := codertest.New(t)
	papi, sony := newMachine(t, supervision.Options{}), newMachine(t, supervision.Options{})
	papi.serve(t, srv, "papi")
	sony.serve(t, srv, "sony")
	rp := papi.ask(t, papi.live(t, "papi", store.ModeLocal), "go test ./...")
	rs := sony.ask(t, sony.live(t, "sony", store.ModeLocal), "make lint")
	me := local(t, srv, supervision.Options{}, "papi", "sony")
	rl := me.ask(t, me.live(t, "", store.ModeLocal), "ls")

	in, err := me.svc.Inbox(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]supervision.PendingView{}
	for _, p := range in.Requests {
		got[p.Host+"/"+p.Command] = p
	}
	want := map[string]int64{"/ls": rl.ID, "papi/go test ./...": 1*supervision.HostIDBase + rp.ID, "sony/make lint": 2*supervision.HostIDBase + rs.ID}
	if len(got) != len(want) {
		t.Fatalf("the inbox lists %d requests, want %d: %+v", len(got), len(want), in.Requests)
	}
	for k, id := range want {
		if got[k].ID != id {
			t.Errorf("%s: ID %d, want %d", k, got[k].ID, id)
		}
	}
	if p := got["papi/go test ./..."]; p.SessionID != supervision.HostIDBase+rp.SessionID || p.Owner != "ana" || p.Agent != "papi" {
		t.Errorf("papi's request as the inbox lists it: %+v", p)
	}
	if len(in.Hosts) != 2 || !in.Hosts[0].Reachable || !in.Hosts[1].Reachable {
		t.Errorf("hosts: %+v", in.Hosts)
	}
	// One item, read by its ID here: the host's, with the host's name.
	r, err := me.svc.Request(t.Context(), 2*supervision.HostIDBase+rs.ID)
	if err != nil || r.Command != "make lint" || r.Host != "sony" || r.SessionID != 2*supervision.HostIDBase+rs.SessionID {
		t.Fatalf("request of sony: %+v %v", r, err)
	}
	ss, err := me.svc.Sessions(t.Context(), supervision.SessionFilter{Statuses: supervision.LiveStatuses})
	if err != nil || len(ss) != 3 {
		t.Fatalf("sessions: %+v %v", ss, err)
	}
	hosts := 0
	for _, s := range ss {
		if s.Host != "" {
			hosts++
		}
	}
	if hosts != 2 {
		t.Errorf("%d of the sessions are the hosts': %+v", hosts, ss)
	}
}

func TestADecisionIsTheHostsCompareAndSet(t *testing.T) {
	srv := codertest.New(t)
	papi := newMachine(t, supervision.Options{})
	papi.serve(t, srv, "papi")
	r := papi.ask(t, papi.live(t, "papi", store.ModeLocal), "go test ./...")
	me := local(t, srv, supervision.Options{}, "papi")
	sub := me.bus.Subscribe(events.Filter{Kinds: []events.Kind{events.RequestChanged}}, 0)
	defer sub.Close()
	id := supervision.HostIDBase + r.ID

	got, err := me.svc.Decide(t.Context(), supervision.Person("ana", supervision.SurfaceWeb), supervision.Decision{Request: id, Approve: true, Reason: "fine"})
	if err != nil || got.ID != id || got.Status != store.StatusApproved || got.Host != "papi" {
		t.Fatalf("decide: %+v %v", got, err)
	}
	there, _ := papi.st.Request(t.Context(), r.ID)
	if there.Status != store.StatusApproved || there.DecidedBy != "ana" || there.Surface != store.SurfaceWeb || there.Reason != "fine" {
		t.Fatalf("the host's store: %+v", there)
	}
	if e, ok := sub.TryNext(); !ok || e.ItemID != id || e.Status != store.StatusApproved || e.Root != me.ws.Root {
		t.Errorf("this machine's bus: %+v %v", e, ok)
	}
	// The second answer lost: the winner is named, with this machine's ID.
	_, err = me.svc.Decide(t.Context(), supervision.Person("ana", supervision.SurfaceSlack), supervision.Decision{Request: id})
	var de *supervision.DecidedError
	if !errors.As(err, &de) || de.Request.ID != id || de.Request.Surface != store.SurfaceWeb || agenterr.KindOf(err) != agenterr.Conflict {
		t.Fatalf("the second decision: %v", err)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("request %d already approved via web by @ana", id)) {
		t.Errorf("the loser is told %q", err)
	}
	// Who may decide is the host's rule: bo is no operator there.
	r2 := papi.ask(t, papi.live(t, "papi", store.ModeLocal), "rm -rf build")
	_, err = me.svc.Decide(t.Context(), supervision.Person("bo", supervision.SurfaceTerminal), supervision.Decision{Request: supervision.HostIDBase + r2.ID, Approve: true})
	if agenterr.KindOf(err) != agenterr.Forbidden || !errors.Is(err, supervision.ErrNotAllowed) {
		t.Fatalf("bo's decision: %v", err)
	}
	if there, _ := papi.st.Request(t.Context(), r2.ID); there.Status != store.StatusPending {
		t.Fatalf("refused, but the request is %s", there.Status)
	}
	// An ID of a host this machine does not know, and one the host does not have.
	if _, err := me.svc.Request(t.Context(), 7*supervision.HostIDBase+1); agenterr.KindOf(err) != agenterr.NotFound {
		t.Errorf("a request of host 7: %v", err)
	}
	if _, err := me.svc.Request(t.Context(), supervision.HostIDBase+999); agenterr.KindOf(err) != agenterr.NotFound || !errors.Is(err, supervision.ErrNotFound) ||
		!strings.Contains(err.Error(), "papi") {
		t.Errorf("request 999 of papi: %v", err)
	}
}

// Twenty people on five machines approve one request of a host at once:
// one wins, nineteen are told who did; the host's audit log has one
// decision.
func TestTwentyConcurrentApprovalsOfAHostsRequestHaveOneWinner(t *testing.T) {
	srv := codertest.New(t)
	papi := newMachine(t, supervision.Options{Config: supervision.Config{Operators: []string{"@p0", "@p1", "@p2", "@p3", "@p4", "@p5",
		"@p6", "@p7", "@p8", "@p9", "@p10", "@p11", "@p12", "@p13", "@p14", "@p15", "@p16", "@p17", "@p18", "@p19"}}})
	papi.serve(t, srv, "papi")
	r := papi.ask(t, papi.live(t, "papi", store.ModeLocal), "go test ./...")
	// Five machines, four people on each.
	machines := make([]*machine, 5)
	for i := range machines {
		machines[i] = local(t, srv, supervision.Options{}, "papi")
	}
	var wins atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, 20)
	for i := range 20 {
		m := machines[i%len(machines)]
		wg.Go(func() {
			<-start
			_, err := m.svc.Decide(context.Background(), supervision.Person(fmt.Sprintf("p%d", i), supervision.SurfaceTerminal),
				supervision.Decision{Request: supervision.HostIDBase + r.ID, Approve: true})
			var de *supervision.DecidedError
			switch {
			case err == nil:
				wins.Add(1)
			case errors.As(err, &de) && de.Request.Status == store.StatusApproved:
			default:
				errs <- err
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("a decision failed otherwise than lost: %v", err)
	}
	if wins.Load() != 1 {
		t.Fatalf("%d decisions won", wins.Load())
	}
	decided := 0
	evs, _ := papi.st.Audit(t.Context(), r.SessionID)
	for _, e := range evs {
		if e.RequestID == r.ID && e.Action == "request_approved" {
			decided++
		}
	}
	if decided != 1 {
		t.Fatalf("the host's audit log has %d decisions of the request", decided)
	}
}

// An agent's process is refused here, before anything reaches the host.
func TestTheCallerCheckIsThisMachines(t *testing.T) {
	srv := codertest.New(t)
	papi := newMachine(t, supervision.Options{})
	papi.serve(t, srv, "papi")
	r := papi.ask(t, papi.live(t, "papi", store.ModeLocal), "go test ./...")
	refused := agenterr.New(agenterr.Forbidden, "agents cannot decide")
	me := local(t, srv, supervision.Options{Caller: func(context.Context, supervision.Actor) error { return refused }}, "papi")
	before := srv.Requests("GET app:" + slug)
	_, err := me.svc.Decide(t.Context(), ana, supervision.Decision{Request: supervision.HostIDBase + r.ID, Approve: true})
	if !errors.Is(err, refused) {
		t.Fatalf("decide from an agent's process: %v", err)
	}
	if n := srv.Requests("GET app:" + slug); n != before {
		t.Errorf("%d requests reached the host", n-before)
	}
	if there, _ := papi.st.Request(t.Context(), r.ID); there.Status != store.StatusPending {
		t.Fatalf("the request is %s", there.Status)
	}
}

// Steering, pause, resume and stop of a host's session are the host's
// session's; so are its checkpoints' reads, and what Slack keeps of it.
func TestSessionChangesGoToTheHost(t *testing.T) {
	srv := codertest.New(t)
	papi := newMachine(t, supervision.Options{})
	papi.serve(t, srv, "papi")
	ses := papi.live(t, "papi", store.ModeHybrid)
	me := local(t, srv, supervision.Options{}, "papi")
	id := supervision.HostIDBase + ses.ID
	ctx := t.Context()

	m, err := me.svc.Steer(ctx, ana, id, "use the retry helper")
	if err != nil || m.SessionID != id {
		t.Fatalf("steer: %+v %v", m, err)
	}
	if q, _ := papi.st.QueuedSteering(ctx, ses.ID); len(q) != 1 || q[0].Text != "use the retry helper" || q[0].SentBy != "ana" {
		t.Fatalf("the host's queue: %+v", q)
	}
	for _, to := range []string{store.SessionPaused, store.SessionActive, store.SessionTerminated} {
		got, err := me.svc.MoveSession(ctx, ana, id, to, "because")
		if err != nil || got.Status != to || got.ID != id || got.Host != "papi" {
			t.Fatalf("move to %s: %+v %v", to, got, err)
		}
		if there, _ := papi.st.Session(ctx, ses.ID); there.Status != to {
			t.Fatalf("the host's session is %s, want %s", there.Status, to)
		}
	}
	if _, err := me.svc.MoveSession(ctx, ana, id, store.SessionActive, ""); !errors.Is(err, supervision.ErrBadTransition) {
		t.Fatalf("resume an ended session: %v", err)
	}
	if err := me.svc.PutPost(ctx, supervision.Post{Surface: "slack", ItemKind: supervision.ItemSession, ItemID: id, SessionID: id, Channel: "C1", TS: "1.2"}); err != nil {
		t.Fatal(err)
	}
	if p, err := me.svc.PostOf(ctx, "slack", supervision.ItemSession, id); err != nil || p.TS != "1.2" || p.SessionID != id {
		t.Fatalf("post: %+v %v", p, err)
	}
	if there, err := papi.st.PostOf(ctx, "slack", store.ItemSession, ses.ID); err != nil || there.Channel != "C1" {
		t.Fatalf("the host keeps the post: %+v %v", there, err)
	}
	if got, err := me.svc.SessionOfThread(ctx, "slack", "C1", "1.2"); err != nil || got != id {
		t.Fatalf("the thread's session: %d %v", got, err)
	}
}

// A host that cannot be reached is shown so, with since when; its items
// are not lost and come back when it does.
func TestAnUnreachableHostIsShownWithSinceWhen(t *testing.T) {
	srv := codertest.New(t)
	papi := newMachine(t, supervision.Options{})
	papi.serve(t, srv, "papi")
	papi.ask(t, papi.live(t, "papi", store.ModeLocal), "go test ./...")
	stateDir := t.TempDir()
	clock := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	me := newMachine(t, supervision.Options{Hosts: []supervision.HostEntry{{Number: 1, Host: clientOf(t, srv, "papi", host.Options{StateDir: stateDir, Now: now})}}})
	me.ask(t, me.live(t, "", store.ModeLocal), "ls")

	if err := srv.DropApp("papi", slug); err != nil {
		t.Fatal(err)
	}
	in, err := me.svc.Inbox(t.Context())
	if err != nil || len(in.Requests) != 1 || in.Requests[0].Host != "" {
		t.Fatalf("with papi down, the inbox: %+v %v", in.Requests, err)
	}
	if h := in.Hosts; len(h) != 1 || h[0].Reachable || !h[0].DownSince.Equal(clock) || !strings.Contains(h[0].Error, "502") {
		t.Fatalf("papi's state: %+v", h)
	}
	// Another process (a later command) says the same since.
	clock = clock.Add(time.Minute)
	other := newMachine(t, supervision.Options{Hosts: []supervision.HostEntry{{Number: 1, Host: clientOf(t, srv, "papi", host.Options{StateDir: stateDir, Now: now})}}})
	in, _ = other.svc.Inbox(t.Context())
	if h := in.Hosts; len(h) != 1 || h[0].Reachable || !h[0].DownSince.Equal(clock.Add(-time.Minute)) {
		t.Fatalf("the next process says: %+v", h)
	}
	if _, err := me.svc.Request(t.Context(), supervision.HostIDBase+1); agenterr.KindOf(err) != agenterr.Unavailable || !strings.Contains(err.Error(), "papi cannot be reached") {
		t.Fatalf("a request of papi while it is down: %v", err)
	}
	if err := srv.RestoreApp("papi", slug); err != nil {
		t.Fatal(err)
	}
	in, _ = me.svc.Inbox(t.Context())
	if len(in.Requests) != 2 || !in.Hosts[0].Reachable {
		t.Fatalf("papi is back, the inbox: %+v %+v", in.Requests, in.Hosts)
	}
	in, _ = other.svc.Inbox(t.Context())
	if !in.Hosts[0].Reachable {
		t.Fatalf("papi is back, the other process says: %+v", in.Hosts)
	}
}

// TestFollowCatchesUpAfterADrop: the proxy drops the host's event stream
// while requests are raised and decided there; the follower gets every
// event of the host's log once, in order, once the host can be reached
// again (DropFor is short by default; AGENTINFRA_STRESS=1 holds it 30 s).
func TestFollowCatchesUpAfterADrop(t *testing.T) {
	srv := codertest.New(t)
	papi := newMachine(t, supervision.Options{})
	papi.serve(t, srv, "papi")
	me := local(t, srv, supervision.Options{}, "papi")
	ses := papi.live(t, "papi", store.ModeLocal)

	var mu sync.Mutex
	var seen []supervision.AuditEvent
	caught := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- me.svc.FollowHosts(ctx, "test", func(context.Context) error {
			select {
			case caught <- struct{}{}:
			default:
			}
			return nil
		}, func(_ context.Context, ev supervision.AuditEvent) error {
			mu.Lock()
			seen = append(seen, ev)
			mu.Unlock()
			return nil
		})
	}()
	<-caught // followed from the host's newest event on
	first, _ := papi.st.LastAuditSeq(t.Context())
	raiseAndDecide := func(n int) {
		for i := range n {
			r := papi.ask(t, ses, fmt.Sprintf("step %d", i))
			if _, err := papi.st.Decide(t.Context(), store.Decision{RequestID: r.ID, Approve: true, By: "bo", Surface: store.SurfaceTerminal}); err != nil {
				t.Fatal(err)
			}
		}
	}
	raiseAndDecide(3)
	if err := srv.DropApp("papi", slug); err != nil {
		t.Fatal(err)
	}
	raiseAndDecide(5)
	time.Sleep(dropFor()) // the drop lasts this long: what it is about
	raiseAndDecide(2)
	if err := srv.RestoreApp("papi", slug); err != nil {
		t.Fatal(err)
	}
	raiseAndDecide(2)
	// A last event marks the end: the stream is in order, so anything sent
	// twice would come before it.
	marker := papi.ask(t, ses, "the end")
	eventually(t, "every event of the host was followed", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) > 0 && seen[len(seen)-1].RequestID == supervision.HostIDBase+marker.ID
	})
	want, _ := papi.st.AuditAfter(t.Context(), first, 1000)
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != len(want) {
		t.Fatalf("followed %d events, the host's log has %d", len(seen), len(want))
	}
	for i, ev := range seen {
		if ev.Seq != want[i].Seq || ev.Action != want[i].Action || ev.RequestID != supervision.HostIDBase+want[i].RequestID {
			t.Fatalf("event %d: %+v, want %+v", i, ev, want[i])
		}
	}
	if cur, ok, _ := me.svc.Cursor(t.Context(), "test@papi"); !ok || cur != want[len(want)-1].Seq {
		t.Errorf("the cursor is %d (%v), want %d", cur, ok, want[len(want)-1].Seq)
	}
}

// A host whose workspace is not up yet when this machine's service starts
// (a console or Slack running before the agent's workspace) is shown as
// unreachable, with why, and is reached once its app is up: Locate finds
// it then.
func TestAHostNotUpYetIsReachedOnceItsAppIs(t *testing.T) {
	srv := codertest.New(t)
	c, err := coder.New(srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	locate := func(ctx context.Context) (host.Location, error) {
		ws, err := c.WorkspaceByOwnerAndName(ctx, "papi")
		if err != nil {
			return host.Location{}, err
		}
		app, _, ok := coder.FindApp(ws, slug)
		if !ok {
			return host.Location{}, fmt.Errorf("workspace papi has no app %s yet", slug)
		}
		root, hdr, hc, err := c.AppRoot(ctx, app)
		return host.Location{URL: root, Header: hdr, HTTPClient: hc}, err
	}
	hc, err := host.New(host.Options{Name: "papi", Token: hostToken, Locate: locate})
	if err != nil {
		t.Fatal(err)
	}
	me := newMachine(t, supervision.Options{Hosts: []supervision.HostEntry{{Number: 1, Host: hc}}})
	followed := make(chan supervision.AuditEvent, 10)
	opened := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	// The first time papi answers, the follower starts from its newest
	// event (catchUp shows what waited already).
	catchUp := func(context.Context) error { opened <- struct{}{}; return nil }
	go me.svc.FollowHosts(ctx, "test", catchUp, func(_ context.Context, ev supervision.AuditEvent) error {
		followed <- ev
		return nil
	})

	in, err := me.svc.Inbox(t.Context())
	if err != nil || len(in.Hosts) != 1 || in.Hosts[0].Reachable || in.Hosts[0].DownSince.IsZero() || !strings.Contains(in.Hosts[0].Error, "not found") {
		t.Fatalf("papi not up yet, the inbox: %+v %v", in.Hosts, err)
	}
	papi := newMachine(t, supervision.Options{})
	papi.serve(t, srv, "papi")
	ses := papi.live(t, "papi", store.ModeLocal)
	eventually(t, "papi is reached", func() bool {
		in, err = me.svc.Inbox(t.Context())
		return err == nil && len(in.Hosts) == 1 && in.Hosts[0].Reachable
	})
	// The follower started before papi was up follows it now.
	select {
	case <-opened:
	case <-time.After(poll.Timeout):
		t.Fatal("the follower started before papi was up did not reach it")
	}
	r := papi.ask(t, ses, "go test ./...")
	in, _ = me.svc.Inbox(t.Context())
	if len(in.Requests) != 1 || in.Requests[0].ID != supervision.HostIDBase+r.ID || in.Requests[0].Host != "papi" {
		t.Fatalf("papi's request in the inbox: %+v", in.Requests)
	}
	timeout := time.After(poll.Timeout)
	for {
		select {
		case ev := <-followed:
			if ev.RequestID == supervision.HostIDBase+r.ID {
				return
			}
		case <-timeout:
			t.Fatal("the follower started before papi was up did not follow it")
		}
	}
}

// "Approve for this session" of a host's request is taken by the host: its
// store keeps the scope its gate reads.
func TestApproveForTheSessionReachesTheHost(t *testing.T) {
	srv := codertest.New(t)
	papi := newMachine(t, supervision.Options{})
	papi.serve(t, srv, "papi")
	r := papi.ask(t, papi.live(t, "papi", store.ModeLocal), "go test ./...")
	me := local(t, srv, supervision.Options{}, "papi")
	got, err := me.svc.Decide(t.Context(), supervision.Person("ana", supervision.SurfaceTerminal), supervision.Decision{Request: supervision.HostIDBase + r.ID, Approve: true, Session: true})
	if err != nil || got.Status != store.StatusApproved {
		t.Fatalf("decide: %+v %v", got, err)
	}
	if there, _ := papi.st.Request(t.Context(), r.ID); there.Scope != store.ScopeSession {
		t.Fatalf("the host's store: scope %q, want %q", there.Scope, store.ScopeSession)
	}
}
