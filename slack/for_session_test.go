package slack

import (
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/internal/testing/fakeslack"
	"github.com/agentinfra/agentinfra/store"
)

// "Approve for this session" approves the request for the rest of its
// session through the supervision service (the message says so), only for
// the owner or an operator, and writes no policy rule.
func TestApproveForTheSessionInTheThread(t *testing.T) {
	w := newWorld(t, testConfig())
	ses := w.session(store.ModeRemote)
	w.message("Session ")
	r := w.raise(ses, store.NewRequest{})
	m := w.message("Request ")
	if !strings.Contains(string(m.Versions[0].Blocks), `"action_id":"approve_session"`) {
		t.Fatalf("the request has no Approve for this session: %s", m.Versions[0].Blocks)
	}
	w.click(eve, m, actionApproveSession, r.ID)
	w.ephemeral(eve.ID, "@eve may not decide request")
	if cur, _ := w.st.Request(w.ctx, r.ID); cur.Status != store.StatusPending {
		t.Fatalf("decided by someone who may not: %+v", cur)
	}
	w.click(ana, m, actionApproveSession, r.ID)
	w.waitMessage(m.TS, "the outcome", func(m fakeslack.Message) bool {
		return strings.Contains(m.Last().Text, "Approved for this session by <@U0ANA>")
	})
	got, _ := w.st.Request(w.ctx, r.ID)
	if got.Status != store.StatusApproved || got.Scope != store.ScopeSession || got.Always || got.DecidedBy != "ana" || got.Surface != store.SurfaceSlack {
		t.Fatalf("the stored decision: %+v", got)
	}
	if _, ok, _ := w.st.SessionApproval(w.ctx, ses.ID, store.NewRequest{Kind: got.Kind, Tool: got.Tool, Command: got.Command, File: got.File, URL: got.URL}); !ok {
		t.Error("the same action is not approved for the session")
	}
}
