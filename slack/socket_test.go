package slack

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/internal/testing/fakeslack"
	"github.com/agentinfra/agentinfra/store"
)

// redeliver sends envelope env again (the same envelope, or a new one with
// the same payload) and waits for its ack.
func (w *world) redeliver(env string, sameEnvelope bool) {
	w.t.Helper()
	again, err := w.fake.Redeliver(env, sameEnvelope)
	if err != nil {
		w.t.Fatal(err)
	}
	if _, err := w.fake.Acked(w.ctx, again); err != nil {
		w.t.Fatal(err)
	}
}

// Slack redelivers what it did not see acked: the same envelope again, or
// a new envelope with the same event_id (an app_mention) or trigger_id (a
// click, a slash command). Each is acked, and acted on once: one steering
// message, one nudge, one steering from the slash command.
func TestRedeliveriesAreHandledOnce(t *testing.T) {
	w := newWorld(t, testConfig())
	ses := w.session(store.ModeRemote)
	root := w.message("Session ")
	w.recorded(store.ItemSession, ses.ID)

	env, err := w.fake.Mention(bo, channel, root.TS, "<@"+fakeslack.BotUserID+"> use the staging database")
	if err != nil {
		t.Fatal(err)
	}
	w.fake.Acked(w.ctx, env)
	w.redeliver(env, true)
	w.redeliver(env, false)

	a, _ := w.st.RaiseAlert(w.ctx, ses.ID, "silent")
	m := w.message(fmt.Sprintf("Stall alert s%d", a.ID))
	click, err := w.fake.Click(bo, m.Channel, m.TS, actionAlertNudge, itoa(a.ID))
	if err != nil {
		t.Fatal(err)
	}
	w.fake.Acked(w.ctx, click)
	w.redeliver(click, true)
	w.redeliver(click, false)

	slash, err := w.fake.Slash(bo, channel, "/agentinfra", fmt.Sprintf("steer %d run the tests too", ses.ID))
	if err != nil {
		t.Fatal(err)
	}
	w.fake.Acked(w.ctx, slash)
	w.redeliver(slash, true)
	w.redeliver(slash, false)

	// A new mention after them all: once it is queued, the redeliveries
	// have long been taken or dropped (the socket's loop drops a
	// redelivery before it reads the next envelope). Each envelope is
	// handled in its own goroutine, so the first deliveries' work may end
	// after the sentinel's: waited for too (the slash command answers once
	// its steering is queued).
	w.mention(bo, root.TS, "sentinel")
	for _, text := range []string{"sentinel", "use the staging database", "run the tests too"} {
		w.eventually("the steering "+text, func() bool {
			q, _ := w.st.QueuedSteering(w.ctx, ses.ID)
			return slices.ContainsFunc(q, func(m store.Steering) bool { return m.Text == text })
		})
	}
	if _, err := w.fake.Responded(w.ctx, slash); err != nil {
		t.Fatal(err)
	}
	w.waitMessage(m.TS, "the nudge", func(m fakeslack.Message) bool { return strings.Contains(string(m.Last().Blocks), "so far") })
	q, _ := w.st.QueuedSteering(w.ctx, ses.ID)
	var texts []string
	for _, s := range q {
		texts = append(texts, s.Text)
	}
	slices.Sort(texts) // handled concurrently: each once, in any order
	if strings.Join(texts, "|") != "Are you still working? Say what you are doing or what blocks you.|run the tests too|sentinel|use the staging database" {
		t.Fatalf("steering queued: %q", texts)
	}
	if got, _ := w.st.Alert(w.ctx, a.ID); got.Nudges != 1 {
		t.Fatalf("nudged %d times", got.Nudges)
	}
	if n := len(w.audit("alert_nudge")); n != 1 {
		t.Fatalf("%d nudges audited", n)
	}
	for _, e := range w.fake.Envelopes() {
		if _, ok := e.AckDelay(); !ok {
			t.Errorf("envelope %s (%s, retry %d) was not acked", e.ID, e.Kind, e.Retry)
		}
	}
}

// A slash command whose work waits on a slow Slack call does not hold the
// socket: a click sent after it is acked, and decided, while that call is
// still pending. The acks' delays, as the fake Slack saw them, are within
// Slack's 3 s (and are reported).
func TestASlashCommandDuringASlowCallDoesNotDelayAClick(t *testing.T) {
	w := newWorld(t, testConfig())
	os.MkdirAll(filepath.Join(w.dbDir, ".agent"), 0o755)
	os.WriteFile(filepath.Join(w.dbDir, ".agent", "policy.yaml"), []byte("commands:\n  hello: echo hello\n"), 0o644)
	ses := w.session(store.ModeRemote)
	r := w.raise(ses, store.NewRequest{})
	m := w.message("Request ")
	w.drained()
	// Slack is slow to post: the next session's thread waits in the call.
	release := w.fake.Hold("chat.postMessage")
	defer release()
	slow := w.session(store.ModeRemote)
	if err := w.fake.Holding(w.ctx, "chat.postMessage", 1); err != nil {
		t.Fatal(err)
	}
	// Its run needs its thread: the slash command's work waits for it.
	slash, err := w.fake.Slash(bo, channel, "/agentinfra", fmt.Sprintf("run %d hello", slow.ID))
	if err != nil {
		t.Fatal(err)
	}
	click, err := w.fake.Click(bo, m.Channel, m.TS, actionApprove, itoa(r.ID))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.fake.Acked(w.ctx, click); err != nil {
		t.Fatal(err)
	}
	w.waitMessage(m.TS, "the approval, the slow call still pending", func(m fakeslack.Message) bool {
		return strings.Contains(m.Last().Text, "Approved by <@U0BO>")
	})
	if n := len(w.fake.Responses(slash)); n != 0 {
		t.Fatalf("the slash command was answered before its slow call: %d", n)
	}
	release()
	w.fake.Responded(w.ctx, slash)
	for _, id := range []string{slash, click} {
		e, _ := w.fake.EnvelopeOf(id)
		d, ok := e.AckDelay()
		t.Logf("%s acked after %v", e.Kind, d)
		if !ok || d >= 3*time.Second {
			t.Errorf("%s acked after %v (ok %v): Slack gives up after 3 s", e.Kind, d, ok)
		}
	}
}
