package slack

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/internal/testing/fakeslack"
	"github.com/agentinfra/agentinfra/store"
)

// "Approve always…" shows in the thread the rule it would add to the
// workspace policy; nothing is written or decided before its confirmation,
// which only the owner or an operator may click, and which must confirm
// the rule planned now. The confirmation approves the request through the
// supervision service (the request's message says "Approved always") and
// writes the rule.
func TestApproveAlwaysInTheThread(t *testing.T) {
	w := newWorld(t, testConfig())
	if err := os.MkdirAll(filepath.Join(w.dbDir, ".agent"), 0o755); err != nil {
		t.Fatal(err)
	}
	ses := w.session(store.ModeRemote)
	root := w.message("Session ")
	r := w.raise(ses, store.NewRequest{})
	m := w.message("Request ")
	if !strings.Contains(string(m.Versions[0].Blocks), `"action_id":"approve_always"`) {
		t.Fatalf("the request has no Approve always: %s", m.Versions[0].Blocks)
	}
	w.click(eve, m, actionApproveAlways, r.ID)
	w.ephemeral(eve.ID, "@eve may not decide request")

	w.click(ana, m, actionApproveAlways, r.ID)
	confirm := w.message(fmt.Sprintf("Approve always, request %d: adds commands: touch ok.txt", r.ID))
	if confirm.ThreadTS != root.TS || !strings.Contains(string(confirm.Last().Blocks), `"action_id":"approve_always_confirm"`) {
		t.Fatalf("the confirmation: %+v", confirm)
	}
	policy := filepath.Join(w.dbDir, ".agent", "policy.yaml")
	if _, err := os.Stat(policy); err == nil {
		t.Fatal("the rule was written before its confirmation")
	}
	value := confirmValue(t, confirm)

	// A confirmation of another rule than the one planned now does nothing.
	stale := strings.SplitN(value, ":", 2)[0] + ":0000000000000000"
	w.click2(ana, confirm, actionConfirmAlways, stale)
	w.ephemeral(ana.ID, "the rule changed since it was shown")
	w.click2(eve, confirm, actionConfirmAlways, value)
	w.ephemeral(eve.ID, "@eve may not decide request")
	if cur, _ := w.st.Request(w.ctx, r.ID); cur.Status != store.StatusPending {
		t.Fatalf("decided before the confirmation: %+v", cur)
	}

	w.click2(bo, confirm, actionConfirmAlways, value)
	w.waitMessage(m.TS, "the outcome", func(m fakeslack.Message) bool { return strings.Contains(m.Last().Text, "Approved always by <@U0BO>") })
	w.waitMessage(confirm.TS, "the confirmation done", func(m fakeslack.Message) bool {
		return strings.Contains(m.Last().Text, "added `commands: touch ok.txt` to .agent/policy.yaml and approved")
	})
	got, _ := w.st.Request(w.ctx, r.ID)
	if got.Status != store.StatusApproved || !got.Always || got.DecidedBy != "bo" || got.Surface != store.SurfaceSlack {
		t.Fatalf("the stored decision: %+v", got)
	}
	if b, err := os.ReadFile(policy); err != nil || !strings.Contains(string(b), "touch ok.txt") {
		t.Fatalf("the policy file: %s %v", b, err)
	}
}

// "Approve for this session", beside "Approve always…", approves the
// request through the supervision service for the rest of its session (the
// store keeps the scope, no policy file is written, the message says so);
// only the owner or an operator may click it, and a critical request's
// message does not offer it.
func TestApproveForTheSessionInTheThread(t *testing.T) {
	w := newWorld(t, testConfig())
	if err := os.MkdirAll(filepath.Join(w.dbDir, ".agent"), 0o755); err != nil {
		t.Fatal(err)
	}
	ses := w.session(store.ModeRemote)
	crit := w.raise(ses, store.NewRequest{Kind: store.KindCommand, Tool: "Bash", Command: "make", Title: "Run make", Risk: store.RiskCritical})
	m := w.message(fmt.Sprintf("Request %d ", crit.ID))
	if strings.Contains(string(m.Versions[0].Blocks), `"action_id":"approve_session"`) {
		t.Fatalf("a critical request offers approve for this session: %s", m.Versions[0].Blocks)
	}
	w.st.CloseRequest(w.ctx, crit.ID, store.StatusWithdrawn, store.SurfaceAgent, "next")

	r := w.raise(ses, store.NewRequest{})
	m = w.message(fmt.Sprintf("Request %d ", r.ID))
	if !strings.Contains(string(m.Versions[0].Blocks), `"action_id":"approve_session"`) {
		t.Fatalf("the request has no Approve for this session: %s", m.Versions[0].Blocks)
	}
	w.click(eve, m, actionApproveSession, r.ID)
	w.ephemeral(eve.ID, "@eve may not decide request")
	w.click(ana, m, actionApproveSession, r.ID)
	w.waitMessage(m.TS, "the outcome", func(m fakeslack.Message) bool {
		return strings.Contains(m.Last().Text, "Approved for this session by <@U0ANA>")
	})
	got, _ := w.st.Request(w.ctx, r.ID)
	if got.Status != store.StatusApproved || got.Scope != store.ScopeSession || got.Always || got.DecidedBy != "ana" || got.Surface != store.SurfaceSlack {
		t.Fatalf("the stored decision: %+v", got)
	}
	if _, err := os.Stat(filepath.Join(w.dbDir, ".agent", "policy.yaml")); err == nil {
		t.Error("approve for this session wrote the policy file")
	}
}

// A stall alert's Dismiss goes through the service as the clicker's.
func TestDismissAStallAlert(t *testing.T) {
	w := newWorld(t, testConfig())
	ses := w.session(store.ModeRemote)
	a, err := w.st.RaiseAlert(w.ctx, ses.ID, "silent for 5m0s")
	if err != nil {
		t.Fatal(err)
	}
	m := w.message(fmt.Sprintf("Stall alert s%d", a.ID))
	w.click(eve, m, actionAlertDismiss, a.ID)
	w.ephemeral(eve.ID, "@eve may not answer stall alert")
	w.click(ana, m, actionAlertDismiss, a.ID)
	w.waitMessage(m.TS, "the dismissal", func(m fakeslack.Message) bool { return strings.Contains(m.Last().Text, "Dismissed by <@U0ANA>") })
	if got, _ := w.st.Alert(w.ctx, a.ID); got.Status != store.AlertDismissed || got.DecidedBy != "ana" || got.Surface != store.SurfaceSlack {
		t.Fatalf("the stored alert: %+v", got)
	}
}

// confirmValue is the value of the confirmation's button.
func confirmValue(t *testing.T, m fakeslack.Message) string {
	t.Helper()
	b := string(m.Last().Blocks)
	const key = `"action_id":"approve_always_confirm","value":"`
	i := strings.Index(b, key)
	if i < 0 {
		t.Fatalf("no confirmation button: %s", b)
	}
	v := b[i+len(key):]
	return v[:strings.IndexByte(v, '"')]
}

// click2 clicks a button whose value is not an item's ID.
func (w *world) click2(u fakeslack.User, m fakeslack.Message, action, value string) {
	w.t.Helper()
	env, err := w.fake.Click(u, m.Channel, m.TS, action, value)
	if err != nil {
		w.t.Fatal(err)
	}
	if _, err := w.fake.Acked(w.ctx, env); err != nil {
		w.t.Fatal(err)
	}
}
