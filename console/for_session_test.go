package console_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/store"
)

// TestBrowserApprovesForTheSession: "Approve for this session" on a
// request's card approves it for the rest of its session (the store then
// covers the same action, and only in that session) and writes no policy.
func TestBrowserApprovesForTheSession(t *testing.T) {
	t.Parallel()
	ctx := tab(t)
	w := newWorld(t)
	ses := w.activeSession(t, "claude", "", "")
	w.open(t, ctx, "/inbox")
	r := w.raiseEdit(t, ses)
	card := fmt.Sprintf("#req-%d", r.ID)
	button := card + " form.for-session button"
	run(t, ctx, "the request appears with Approve for this session", visible(button))
	run(t, ctx, "Approve for this session", click(button), visible(card+" .verdict"))
	bg := context.Background()
	got, err := w.st.Request(bg, r.ID)
	if err != nil || got.Status != store.StatusApproved || got.Scope != store.ScopeSession || got.Always || got.DecidedBy != "ana" || got.Surface != store.SurfaceWeb {
		t.Fatalf("the request in the store: %+v %v", got, err)
	}
	same := store.NewRequest{SessionID: ses.ID, Kind: r.Kind, Tool: r.Tool, File: r.File}
	if prior, ok, err := w.st.SessionApproval(bg, ses.ID, same); !ok || err != nil || prior.ID != r.ID {
		t.Fatalf("the same edit is not approved for the session: %+v %v %v", prior, ok, err)
	}
	if flash := textOf(t, ctx, "body"); !strings.Contains(flash, fmt.Sprintf("approved for the rest of session %d", ses.ID)) {
		t.Errorf("the page does not say the scope:\n%s", flash)
	}
}
