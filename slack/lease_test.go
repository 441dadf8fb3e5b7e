package slack

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/internal/testing/fakeslack"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision"
	"github.com/agentinfra/agentinfra/workspace"
)

// syncBuffer is a log both a service and the test read.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Two `agentinfra slack` on one workspace (two processes: two store
// handles, two supervision services, one database file): one posts, the
// other says so and waits without connecting; every item is posted once.
// When the first stops, the second takes over and posts what comes next,
// and nothing twice.
func TestTwoServicesOnOneStorePostOnce(t *testing.T) {
	w := newWorld(t, testConfig())
	st2, err := store.Open(w.ctx, filepath.Join(w.dbDir, store.FileName), store.Options{PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	ws, _ := workspace.New(w.dbDir)
	sup2, err := supervision.New(supervision.Options{Store: st2, Config: supervision.Config{Operators: []string{"@bo"}}, Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	var log2 syncBuffer
	second, err := New(Options{Supervision: sup2, Config: w.conf, Tokens: Tokens{App: fakeslack.AppToken, Bot: fakeslack.BotToken}, APIURL: w.fake.APIURL(),
		Backoff: 50 * time.Millisecond, Log: slog.New(slog.NewTextHandler(&log2, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx2, stop2 := context.WithCancel(w.ctx)
	done2 := make(chan error, 1)
	go func() { done2 <- second.Run(ctx2) }()
	defer func() { stop2(); <-done2 }()
	w.eventually("the second one saying it waits", func() bool { return strings.Contains(log2.String(), "another agentinfra slack") })

	ses := w.session(store.ModeRemote)
	r := w.raise(ses, store.NewRequest{})
	w.message(fmt.Sprintf("Request %d ", r.ID))
	w.drained()
	if n := w.fake.Hellos(); n != 1 {
		t.Fatalf("%d Socket Mode connections: the waiting one connected", n)
	}

	// The first stops: the second takes over.
	w.stopSvc()
	if err := <-w.done; err != nil {
		t.Fatal(err)
	}
	if err := w.fake.Connected(w.ctx, 2); err != nil {
		t.Fatal(err)
	}
	w.st.Decide(w.ctx, store.Decision{RequestID: r.ID, Approve: true, By: "ana", Surface: store.SurfaceTerminal})
	r2 := w.raise(ses, store.NewRequest{})
	w.message(fmt.Sprintf("Request %d ", r2.ID))
	w.drained()
	for prefix, want := range map[string]int{fmt.Sprintf("Session %d ", ses.ID): 1, fmt.Sprintf("Request %d ", r.ID): 1, fmt.Sprintf("Request %d ", r2.ID): 1} {
		if n := w.countFirst(prefix); n != want {
			t.Errorf("%d messages %q, want %d: %s", n, prefix, want, w.dump())
		}
	}
	if !strings.Contains(log2.String(), "posting from this one") {
		t.Fatalf("the second did not say it took over: %s", log2.String())
	}
}

// A session switched to local (the agent itself can, with
// set_operational_mode) is no longer decided or steered from Slack: its
// thread says so, its old buttons and mentions only explain why.
func TestALocalSessionIsNotDecidableOrSteerableFromSlack(t *testing.T) {
	w := newWorld(t, testConfig())
	ses := w.session(store.ModeRemote)
	root := w.message("Session ")
	r := w.raise(ses, store.NewRequest{})
	m := w.message("Request ")
	p, _ := w.st.RaisePrompt(w.ctx, store.NewPrompt{SessionID: ses.ID, Kind: store.PromptClarification, Text: "Which DB?"})
	pm := w.message(fmt.Sprintf("Prompt p%d", p.ID))
	// Reject asked for its reason before the switch.
	w.click(bo, m, actionReject, r.ID)
	w.message("<@U0BO> why reject request")
	if _, err := w.st.SetSessionMode(w.ctx, ses.ID, store.ModeLocal, "papi", store.SurfaceAgent); err != nil {
		t.Fatal(err)
	}
	w.message(fmt.Sprintf(":house: Session %d is in local mode now", ses.ID))

	w.mention(bo, root.TS, "it is a trap") // the reason, after the switch
	w.ephemeral(bo.ID, "in local mode now, so Slack can no longer decide request")
	w.click(bo, m, actionApprove, r.ID)
	w.click(ana, pm, actionPromptContinue, p.ID)
	w.ephemeral(ana.ID, "in local mode now, so Slack can no longer answer prompt")
	w.mention(bo, root.TS, "steer it")
	w.ephemeral(bo.ID, "in local mode now, so Slack can no longer steer session")
	w.eventually("three refusals to bo", func() bool {
		n := 0
		for _, e := range w.fake.Ephemerals() {
			if e.User == bo.ID && strings.Contains(e.Text, "local mode") {
				n++
			}
		}
		return n == 3
	})
	if cur, _ := w.st.Request(w.ctx, r.ID); cur.Status != store.StatusPending {
		t.Fatalf("decided from Slack while local: %+v", cur)
	}
	if cur, _ := w.st.Prompt(w.ctx, p.ID); cur.Status != store.PromptPending {
		t.Fatalf("answered from Slack while local: %+v", cur)
	}
	if q, _ := w.st.QueuedSteering(w.ctx, ses.ID); len(q) != 0 {
		t.Fatalf("steered from Slack while local: %+v", q)
	}
}

// A local session switched to remote gets its thread, and what waits in
// it — raised while it was local — is posted then.
func TestASessionSwitchedToRemotePostsWhatWaits(t *testing.T) {
	w := newWorld(t, testConfig())
	ses := w.session(store.ModeLocal)
	r := w.raise(ses, store.NewRequest{})
	p, _ := w.st.RaisePrompt(w.ctx, store.NewPrompt{SessionID: ses.ID, Kind: store.PromptClarification, Text: "Which DB?"})
	if _, err := w.st.SetSessionMode(w.ctx, ses.ID, store.ModeRemote, "ana", store.SurfaceTerminal); err != nil {
		t.Fatal(err)
	}
	root := w.message(fmt.Sprintf("Session %d ", ses.ID))
	m := w.message(fmt.Sprintf("Request %d ", r.ID))
	pm := w.message(fmt.Sprintf("Prompt p%d ", p.ID))
	if m.ThreadTS != root.TS || pm.ThreadTS != root.TS {
		t.Fatalf("not in the session's thread: %+v %+v", m, pm)
	}
	w.click(bo, m, actionApprove, r.ID)
	w.waitMessage(m.TS, "the approval", func(m fakeslack.Message) bool { return strings.Contains(m.Last().Text, "Approved by <@U0BO>") })
}
