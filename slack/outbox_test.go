package slack

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/internal/testing/fakeslack"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision"
)

// countFirst counts the messages whose first text starts with prefix.
func (w *world) countFirst(prefix string) int {
	n := 0
	for _, m := range w.fake.Messages() {
		if strings.HasPrefix(m.Versions[0].Text, prefix) {
			n++
		}
	}
	return n
}

// drained waits until the outbox has nothing left to post.
func (w *world) drained() {
	w.t.Helper()
	w.eventually("the outbox drained", func() bool {
		n, err := w.sup.OutboxLen(w.ctx, supervision.SurfaceSlack)
		return err == nil && n == 0
	})
}

// Six 429s in a row on an error_recovery prompt's message, then a
// restart: every item — the prompt, a request, a stall alert, its
// escalation, the end of the run — is posted, each exactly once.
func TestSixRateLimitsThenARestartPostEverythingOnce(t *testing.T) {
	w := newWorld(t, testConfig())
	ses := w.session(store.ModeRemote)
	w.message(fmt.Sprintf("Session %d ", ses.ID))
	w.recorded(store.ItemSession, ses.ID)
	w.fake.RateLimit("chat.postMessage", 1, 1, 1, 1, 1, 1)
	p, err := w.st.RaisePrompt(w.ctx, store.NewPrompt{SessionID: ses.ID, Kind: store.PromptErrorRecovery, Text: "the build broke"})
	if err != nil {
		t.Fatal(err)
	}
	w.fake.Wait(w.ctx, "six 429s", func() bool { return len(w.fake.Calls("chat.postMessage")) >= 6 })
	w.stopSvc()
	if err := <-w.done; err != nil {
		t.Fatal(err)
	}
	w.st.DecidePrompt(w.ctx, store.PromptDecision{ID: p.ID, Action: store.ActionContinue, By: "ana", Surface: store.SurfaceTerminal})
	r := w.raise(ses, store.NewRequest{})
	a, _ := w.st.RaiseAlert(w.ctx, ses.ID, "silent for 5m0s")
	w.st.CloseAlert(w.ctx, a.ID, store.AlertEscalated, "no answer to 3 nudges")
	w.st.SetSessionStatus(w.ctx, ses.ID, store.Transition{To: store.SessionTerminated, By: "agentinfra", Reason: "the run finished: REVIEW"})
	w.start()
	w.message(fmt.Sprintf("Session %d terminated: the run finished", ses.ID))
	w.drained()
	for prefix, want := range map[string]int{
		fmt.Sprintf("Session %d ", ses.ID):                             2, // the thread and its end
		fmt.Sprintf("Request %d ", r.ID):                               1,
		fmt.Sprintf("Prompt p%d ", p.ID):                               1,
		fmt.Sprintf("Stall alert s%d", a.ID):                           1,
		"<!channel> :rotating_light:":                                  1,
		fmt.Sprintf("Session %d terminated: the run finished", ses.ID): 1,
	} {
		if n := w.countFirst(prefix); n != want {
			t.Errorf("%d messages %q, want %d; %s", n, prefix, want, w.dump())
		}
	}
	var limited int
	for _, c := range w.fake.Calls("chat.postMessage") {
		if c.Status == 429 {
			limited++
		}
	}
	if limited != 6 {
		t.Fatalf("%d calls met a 429, want the six", limited)
	}
}

// A message Slack refuses (not a rate limit: an error of its own) is kept
// in the store and posted once Slack takes it, in the session's order;
// another session's messages do not wait for it: a session whose channel
// the bot is not in yet posts once it is invited, while the others post
// all along.
func TestARefusedMessageIsKeptAndPostedLater(t *testing.T) {
	w := newWorld(t, testConfig())
	w.fake.Outside("C0LATER", true)
	later, err := w.st.CreateSession(w.ctx, store.NewSession{Owner: "ana", Mode: store.ModeRemote, CLI: "codex", Channel: "C0LATER"})
	if err != nil {
		t.Fatal(err)
	}
	w.st.SetSessionStatus(w.ctx, later.ID, store.Transition{To: store.SessionActive, By: "ana"})
	p, _ := w.st.RaisePrompt(w.ctx, store.NewPrompt{SessionID: later.ID, Kind: store.PromptErrorRecovery, Text: "the build broke"})
	w.fake.Wait(w.ctx, "two refusals", func() bool { return len(w.fake.Calls("chat.postMessage")) >= 2 })
	other := w.session(store.ModeRemote)
	r := w.raise(other, store.NewRequest{})
	w.message(fmt.Sprintf("Request %d ", r.ID))
	w.fake.Outside("C0LATER", false) // /invite @agentinfra
	w.drained()
	// The later session's thread is started by the catch-up, which tries
	// again with a back-off: the outbox can be empty before it does.
	w.eventually("the later session's messages", func() bool { return len(w.fake.Messages()) >= 4 })
	var order []string
	for _, m := range w.fake.Messages() {
		order = append(order, strings.SplitN(m.Versions[0].Text, ":", 2)[0])
	}
	want := []string{fmt.Sprintf("Session %d started", other.ID), fmt.Sprintf("Request %d (risk low)", r.ID),
		fmt.Sprintf("Session %d started", later.ID), fmt.Sprintf("Prompt p%d (error_recovery)", p.ID)}
	if strings.Join(order, "|") != strings.Join(want, "|") {
		t.Fatalf("posted %q, want %q", order, want)
	}
}

// A 429 on an ephemeral pauses ephemerals only: an operator's decision
// made while the refusal's ephemeral waits out its Retry-After shows at
// once, before the ephemeral is sent again.
func TestARateLimitedEphemeralDoesNotHoldADecision(t *testing.T) {
	w := newWorld(t, testConfig())
	ses := w.session(store.ModeRemote)
	r := w.raise(ses, store.NewRequest{})
	m := w.message("Request ")
	w.fake.RateLimit("chat.postEphemeral", 3)
	w.click(eve, m, actionApprove, r.ID) // refused: its ephemeral meets the 429
	w.fake.Wait(w.ctx, "the ephemeral's 429", func() bool { return len(w.fake.Calls("chat.postEphemeral")) == 1 })
	w.click(bo, m, actionApprove, r.ID)
	m = w.waitMessage(m.TS, "the approval", func(m fakeslack.Message) bool { return strings.Contains(m.Last().Text, "Approved by <@U0BO>") })
	w.ephemeral(eve.ID, "Not allowed")
	var approvedAt, retriedAt int64
	for _, c := range w.fake.Calls("chat.update") {
		if strings.Contains(c.Params["text"], "Approved by") {
			approvedAt = c.At.UnixNano()
		}
	}
	eph := w.fake.Calls("chat.postEphemeral")
	retriedAt = eph[len(eph)-1].At.UnixNano()
	if approvedAt == 0 || approvedAt > retriedAt {
		t.Fatalf("the decision showed after the rate-limited ephemeral was retried: %v > %v", approvedAt, retriedAt)
	}
}
