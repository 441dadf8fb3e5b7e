package bridge

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision/policy"
)

// gateOf is a gate of a new session in a real store, under pol, with the
// events it emits.
func gateOf(t *testing.T, pol *policy.Policy) (*Gate, *store.Store, *[]runner.Event) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), store.FileName), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ses := liveSession(t, st, pol.Root)
	var mu sync.Mutex
	evs := &[]runner.Event{}
	g := newGate(Options{Store: st, Session: ses, Policy: func() *policy.Policy { return pol }, OnEvent: func(ev runner.Event) {
		mu.Lock()
		*evs = append(*evs, ev)
		mu.Unlock()
	}})
	return g, st, evs
}

// liveSession is a new active session of ana's in dir, with claude.
func liveSession(t *testing.T, st *store.Store, dir string) store.Session {
	t.Helper()
	ctx := context.Background()
	ses, err := st.CreateSession(ctx, store.NewSession{Owner: "ana", Workspace: dir, CLI: "claude"})
	if err != nil {
		t.Fatal(err)
	}
	if ses, err = st.SetSessionStatus(ctx, ses.ID, store.Transition{To: store.SessionActive, By: "ana"}); err != nil {
		t.Fatal(err)
	}
	return ses
}

// writeAll is a policy (and allowlist) that auto-approves every write up
// to high.
func writeAll(t *testing.T) *policy.Policy {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "docs"), 0o755)
	os.MkdirAll(filepath.Join(root, ".git", "hooks"), 0o755)
	return &policy.Policy{Root: root,
		File:      policy.File{AutoApprove: policy.AutoApprove{Write: []string{"**"}, Commands: []string{"touch *"}, MaxRisk: policy.RiskHigh}},
		Allowlist: policy.Allowlist{Write: []string{"**"}, Commands: []string{"touch *"}, MaxRisk: policy.RiskHigh}}
}

// decideAsPerson answers the next request of the session as ana would.
func decideAsPerson(t *testing.T, st *store.Store, approve bool) <-chan store.Request {
	out := make(chan store.Request, 1)
	go func() {
		ctx := context.Background()
		changes, _ := st.Changes(ctx)
		// A look before the first change: the request may have been
		// raised before the subscription (no change would announce it).
		for first := true; ; first = false {
			if !first {
				if _, ok := <-changes; !ok {
					return
				}
			}
			if p, _ := st.Pending(ctx); len(p) > 0 {
				st.Decide(ctx, store.Decision{RequestID: p[0].ID, Approve: approve, By: "ana", Surface: store.SurfaceTerminal, Reason: "no"})
				r, _ := st.Request(ctx, p[0].ID)
				out <- r
				return
			}
		}
	}()
	return out
}

// A change of several files (a codex patch) is judged by every file: with
// writes auto-approved everywhere, docs/a.md alone goes ahead, but the same
// change touching .git/hooks/pre-commit asks a person, graded critical.
// Before, the gate judged the first file only and let the patch through.
func TestEveryFileOfAChangeIsJudged(t *testing.T) {
	pol := writeAll(t)
	g, st, _ := gateOf(t, pol)
	ctx := context.Background()
	if ans := g.Decide(ctx, Ask{NativeID: "c1", Kind: store.KindEdit, Tool: "apply_patch", File: "docs/a.md"}); !ans.Allow || !ans.ByPolicy {
		t.Fatalf("docs/a.md alone: %+v", ans)
	}
	person := decideAsPerson(t, st, false)
	ans := g.Decide(ctx, Ask{NativeID: "c2", Kind: store.KindEdit, Tool: "apply_patch", File: "docs/a.md", Files: []string{".git/hooks/pre-commit"}})
	if ans.Allow {
		t.Fatalf("a patch into .git/hooks was allowed: %+v", ans)
	}
	if r := <-person; r.Risk != policy.RiskCritical {
		t.Fatalf("a patch into .git/hooks: its request %+v", r)
	}
}

// What the audit log says of each call: what was decided, then what the
// CLI did with that same call (by its native ID); a call that ran though
// nobody here allowed it is ran_unasked with what the policy would have
// said, and a warning on the run's events.
func TestAuditSaysWhatWasDecidedAndWhatTheCLIDid(t *testing.T) {
	pol := writeAll(t)
	g, st, evs := gateOf(t, pol)
	ctx := context.Background()
	touch := Ask{NativeID: "t1", Kind: store.KindCommand, Tool: "Bash", Command: "touch ok.txt"}
	if ans := g.Decide(ctx, touch); !ans.Allow {
		t.Fatalf("touch: %+v", ans)
	}
	g.Report(touch, Outcome{Ran: true, By: "user_temporary"})
	g.Report(touch, Outcome{Ran: true}) // a second report of the same call

	env := Ask{NativeID: "r1", Kind: store.KindTool, Tool: "Read", File: ".env"}
	g.Report(env, Outcome{Ran: true, By: "config", Unasked: true}) // claude's own rule: never asked

	person := decideAsPerson(t, st, false)
	rm := Ask{NativeID: "x1", Kind: store.KindCommand, Tool: "Bash", Command: "rm -rf docs"}
	g.Decide(ctx, rm)
	req := <-person
	g.Report(rm, Outcome{Ran: true, By: "hook", Unasked: true}) // a hook allowed what a person rejected

	audit, err := st.Audit(ctx, g.opts.Session.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range audit {
		var d map[string]any
		json.Unmarshal(e.Detail, &d)
		if id, _ := d["native_id"].(string); id != "" {
			got = append(got, e.Action+" "+id)
		}
		switch {
		case e.Action == AuditPolicyAllowed && (d["rule"] != "commands: touch *" || d["risk"] != policy.RiskLow):
			t.Errorf("the policy's decision lacks its verdict: %s", e.Detail)
		case e.Action == AuditRanUnasked && d["policy"] == nil:
			t.Errorf("ran_unasked without what the policy says: %s", e.Detail)
		case e.Action == AuditRanUnasked && d["native_id"] == "x1" && (e.RequestID != req.ID || !strings.Contains(d["why"].(string), "said no")):
			t.Errorf("the call run after a no: request %d (want %d), %s", e.RequestID, req.ID, e.Detail)
		}
	}
	want := []string{"policy_allowed t1", "tool_ran t1", "ran_unasked r1", "ran_unasked x1"}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("the audit log of the calls:\n got %v\nwant %v", got, want)
	}
	warnings := 0
	for _, ev := range *evs {
		if ev.Kind == "warning" {
			warnings++
		}
	}
	if warnings != 2 {
		t.Errorf("%d warnings for the 2 calls run unasked: %v", warnings, *evs)
	}
}

// Issue 27, item 12: 190 requests denied because the database failed were
// recorded nowhere. A request that cannot be recorded is still denied (fail
// closed), and said where a person sees it: the run's output and the log
// of storage failures beside the database.
func TestARequestThatCannotBeRecordedIsDeniedAndLogged(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "state", store.FileName), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ses, _ := st.CreateSession(ctx, store.NewSession{Owner: "ana", Workspace: t.TempDir(), CLI: "claude", TaskID: "a1"})
	ses, err = st.SetSessionStatus(ctx, ses.ID, store.Transition{To: store.SessionActive, By: "ana"})
	if err != nil {
		t.Fatal(err)
	}
	st.Close() // every statement fails from here on
	var events []runner.Event
	g := newGate(Options{Store: st, Session: ses, OnEvent: func(e runner.Event) { events = append(events, e) }})
	ans := g.Decide(ctx, Ask{Kind: store.KindCommand, Tool: "Bash", Command: "touch ok.txt", Title: "Run touch ok.txt"})
	if ans.Allow || !strings.Contains(ans.Message, "could not record the approval request") {
		t.Fatalf("a request that could not be recorded: %+v", ans)
	}
	if len(events) != 1 || events[0].Kind != "warning" || !strings.Contains(events[0].Text, "denied Bash (Run touch ok.txt) without asking") {
		t.Errorf("the run's output: %+v", events)
	}
	fs, err := store.Failures(filepath.Dir(st.Path()))
	if err != nil || len(fs) != 1 || fs[0].What != "denied" || fs[0].SessionID != ses.ID || fs[0].TaskID != "a1" || !strings.Contains(fs[0].Text, "Run touch ok.txt") {
		t.Errorf("the log of storage failures: %+v %v", fs, err)
	}
}
