package bridge

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision/policy"
)

// resumedGate is what a resume does to the session of g, in the real
// store: its supervisor dies (the session interrupted), a person resumes
// it, and a new supervisor's gate takes the run up on the same session.
func resumedGate(t *testing.T, g *Gate, st *store.Store) (*Gate, *[]runner.Event) {
	t.Helper()
	ctx := context.Background()
	id := g.opts.Session.ID
	if _, err := st.SetSessionStatus(ctx, id, store.Transition{To: store.SessionInterrupted, By: store.ActorAgentinfra,
		Surface: store.SurfaceSupervisor, Reason: "its supervisor died"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ReopenSession(ctx, id, store.Reopen{By: "ana", Reason: "resumed by @ana"}); err != nil {
		t.Fatal(err)
	}
	ses, err := st.SetSessionStatus(ctx, id, store.Transition{To: store.SessionActive, By: store.ActorAgentinfra})
	if err != nil {
		t.Fatal(err)
	}
	evs := &[]runner.Event{}
	opts := g.opts
	opts.Session = ses
	opts.OnEvent = func(ev runner.Event) { *evs = append(*evs, ev) }
	return newGate(opts), evs
}

// requestsOf is every request the session raised.
func requestsOf(t *testing.T, st *store.Store, id int64) []store.Request {
	t.Helper()
	rs, err := st.Requests(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// notAskedAgain reports whether evs say request id was given again
// without asking.
func notAskedAgain(evs []runner.Event, id int64) bool {
	for _, ev := range evs {
		if ev.Kind == "approval" && strings.Contains(ev.Text, "not asked again") && strings.Contains(ev.Text, "request "+strconv.FormatInt(id, 10)+" ") {
			return true
		}
	}
	return false
}

// Issue 33: a decision already taken is never asked twice. The CLI that
// asks again after a resume about the very call a person approved before
// the supervisor died (claude --resume re-asks its pending tool_use) gets
// that approval from the ledger, without a new request; a new call of the
// same command asks a person, since the approved one may have run.
func TestACallApprovedBeforeTheCrashIsNotAskedAgain(t *testing.T) {
	pol := &policy.Policy{Root: t.TempDir()}
	g, st, _ := gateOf(t, pol)
	ctx := context.Background()
	id := g.opts.Session.ID
	appendLine := Ask{NativeID: "toolu_1", Kind: store.KindCommand, Tool: "Bash", Command: "echo x >> counter", Title: "Run echo x >> counter"}

	person := decideAsPerson(t, st, true)
	if ans := g.Decide(ctx, appendLine); !ans.Allow {
		t.Fatalf("approved by ana: %+v", ans)
	}
	approved := <-person

	g2, evs := resumedGate(t, g, st)
	ans := g2.Decide(ctx, appendLine)
	if !ans.Allow || ans.Request.ID != approved.ID {
		t.Fatalf("the same call asked again after the resume: %+v, want request %d's approval", ans, approved.ID)
	}
	if rs := requestsOf(t, st, id); len(rs) != 1 {
		t.Fatalf("the call asked twice: %d requests %+v", len(rs), rs)
	}
	if !notAskedAgain(*evs, approved.ID) {
		t.Errorf("the run's events do not say request %d was not asked again: %+v", approved.ID, *evs)
	}

	// The same command as a new call: the approval was one run of it.
	person = decideAsPerson(t, st, false)
	again := appendLine
	again.NativeID = "toolu_2"
	if ans := g2.Decide(ctx, again); ans.Allow {
		t.Fatalf("a new call of an approved command ran on the old approval: %+v", ans)
	}
	if r := <-person; r.ID == approved.ID {
		t.Fatalf("no new request for the new call")
	}
	if rs := requestsOf(t, st, id); len(rs) != 2 {
		t.Errorf("%d requests, want 2 (the approved call, the new one)", len(rs))
	}
}

// A decision a person took that never reached the CLI (the supervisor died
// between the decision and telling the CLI, so the CLI never ran the call)
// is given to the CLI when it asks for the same action after the resume,
// whatever its new call ID — once: a third ask is a person's again. A
// rejection is given back the same way, with the person's reason.
func TestADecisionThatNeverReachedTheCLIIsGivenAfterTheResume(t *testing.T) {
	pol := &policy.Policy{Root: t.TempDir()}
	g, st, _ := gateOf(t, pol)
	ctx := context.Background()
	id := g.opts.Session.ID
	raise := func(native, command string, approve bool) store.Request {
		r, err := st.RaiseRequest(ctx, store.NewRequest{SessionID: id, NativeID: native, Kind: store.KindCommand, Tool: "Bash", Command: command, Title: "Run " + command})
		if err != nil {
			t.Fatal(err)
		}
		if r, err = st.Decide(ctx, store.Decision{RequestID: r.ID, Approve: approve, By: "ana", Surface: store.SurfaceSlack, Reason: "not that file"}); err != nil {
			t.Fatal(err)
		}
		return r
	}
	yes := raise("call_1", "echo x >> counter", true)
	no := raise("call_2", "rm counter", false)

	g2, evs := resumedGate(t, g, st)
	ans := g2.Decide(ctx, Ask{NativeID: "call_9", Kind: store.KindCommand, Tool: "Bash", Command: "echo x >> counter"})
	if !ans.Allow || ans.Request.ID != yes.ID {
		t.Fatalf("the undelivered approval: %+v", ans)
	}
	ans = g2.Decide(ctx, Ask{NativeID: "call_10", Kind: store.KindCommand, Tool: "Bash", Command: "rm counter"})
	if ans.Allow || ans.Request.ID != no.ID || !strings.Contains(ans.Message, "not that file") {
		t.Fatalf("the undelivered rejection: %+v", ans)
	}
	if rs := requestsOf(t, st, id); len(rs) != 2 {
		t.Fatalf("asked again: %d requests %+v", len(rs), rs)
	}
	if !notAskedAgain(*evs, yes.ID) || !notAskedAgain(*evs, no.ID) {
		t.Errorf("the run's events: %+v", *evs)
	}

	// Delivered now: one more call of the same command is a person's.
	person := decideAsPerson(t, st, true)
	if ans := g2.Decide(ctx, Ask{NativeID: "call_11", Kind: store.KindCommand, Tool: "Bash", Command: "echo x >> counter"}); !ans.Allow {
		t.Fatalf("approved by ana: %+v", ans)
	}
	if r := <-person; r.ID == yes.ID {
		t.Fatal("the delivered approval was taken twice")
	}
}
