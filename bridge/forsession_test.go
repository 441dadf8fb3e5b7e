package bridge

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/internal/testing/poll"
	"github.com/agentinfra/agentinfra/store"
)

// gateWorld is a store with two live sessions of ana's in one folder and a
// gate for each (no policy file: every action asks a person).
func gateWorld(t *testing.T) (*store.Store, *Gate, *Gate) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), store.FileName), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	dir := t.TempDir()
	gate := func() *Gate { return newGate(Options{Store: st, Session: liveSession(t, st, dir)}) }
	return st, gate(), gate()
}

// ask asks g about command as a CLI would, and answers the request it
// raises (if it raises one) with scope; it returns the gate's answer and
// whether a person was asked.
func ask(t *testing.T, st *store.Store, g *Gate, command, scope string) (Answer, bool) {
	t.Helper()
	return askAbout(t, st, g, Ask{Kind: store.KindCommand, Tool: "Bash", Command: command, Title: "Run " + command}, scope)
}

// askAbout is ask for any call a.
func askAbout(t *testing.T, st *store.Store, g *Gate, a Ask, scope string) (Answer, bool) {
	t.Helper()
	command := a.Title
	got := make(chan Answer, 1)
	go func() {
		got <- g.Decide(context.Background(), a)
	}()
	var pending int64
	poll.Eventually(t, func() bool {
		select {
		case a := <-got:
			got <- a
			return true
		default:
		}
		p, _ := st.Pending(context.Background())
		for _, r := range p {
			if r.SessionID == g.opts.Session.ID {
				pending = r.ID
				return true
			}
		}
		return false
	}, "the gate neither answered nor asked about %q", command)
	if pending == 0 {
		return <-got, false
	}
	if _, err := st.Decide(context.Background(), store.Decision{RequestID: pending, Approve: true, By: "ana", Surface: store.SurfaceTerminal, Scope: scope}); err != nil {
		t.Fatal(err)
	}
	return <-got, true
}

// Approved for its session, a command asked again in that session is
// approved without a person (audited, naming the approval); another
// command, or the same one in another session, still asks.
func TestTheGateApprovesWhatWasApprovedForTheSession(t *testing.T) {
	st, g, other := gateWorld(t)
	// The person's approval for the session is what a bridge may pass on
	// to its CLI's own mechanism (ForSession); a repeat it covers is not.
	if a, asked := ask(t, st, g, "touch ok.txt", store.ScopeSession); !asked || !a.Allow || !a.ForSession() {
		t.Fatalf("first touch: asked %v, %+v", asked, a)
	}
	// The same command in another spelling is the same rule.
	if a, asked := ask(t, st, g, "/bin/bash -lc 'touch ok.txt'", ""); asked || !a.Allow || a.ForSession() {
		t.Fatalf("second touch: asked %v, %+v; want approved without asking", asked, a)
	}
	if a, asked := ask(t, st, g, "touch three.txt", ""); !asked || !a.Allow || a.ForSession() {
		t.Fatalf("an approval of the request alone: asked %v, %+v", asked, a)
	}
	if _, asked := ask(t, st, g, "touch other.txt", ""); !asked {
		t.Error("another command was approved by the session's approval")
	}
	if _, asked := ask(t, st, other, "touch ok.txt", ""); !asked {
		t.Error("another session's touch was approved without asking")
	}
	audit, _ := st.Audit(context.Background(), g.opts.Session.ID)
	n := 0
	for _, e := range audit {
		if e.Action == AuditPolicyAllowed && strings.Contains(string(e.Detail), `"scope":"session"`) {
			n++
			if e.RequestID == 0 || !strings.Contains(string(e.Detail), `"by":"ana"`) || !strings.Contains(string(e.Detail), `"mechanism":"agentinfra"`) {
				t.Errorf("the auto-approval does not name the approval it came from: %+v %s", e, e.Detail)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d auto-approvals for the session in the audit log, want 1", n)
	}
}

// A critical command always asks, even when its like was approved for the
// session (by a decider that did not refuse it).
func TestACriticalCommandIsNeverApprovedForTheSession(t *testing.T) {
	st, g, _ := gateWorld(t)
	ask(t, st, g, "make", store.ScopeSession)
	if _, asked := ask(t, st, g, "make", ""); !asked {
		t.Fatal("a critical command was approved by the session's approval")
	}
}

// A patch of several files is approved for the session only as far as
// each of its files is: the approval of an edit of a.txt does not let a
// patch of a.txt and b.txt through (it did: the patch's first file was
// compared alone).
func TestAPatchOfSeveralFilesIsCoveredOnlyFileByFile(t *testing.T) {
	st, g, _ := gateWorld(t)
	root := g.Root()
	edit := func(files ...string) Ask {
		a := Ask{Kind: store.KindEdit, Tool: "apply_patch", Title: "Edit " + strings.Join(files, ", ")}
		a.File = filepath.Join(root, files[0])
		for _, f := range files[1:] {
			a.Files = append(a.Files, filepath.Join(root, f))
		}
		return a
	}
	if _, asked := askAbout(t, st, g, edit("a.txt"), store.ScopeSession); !asked {
		t.Fatal("the first edit of a.txt was not asked")
	}
	if _, asked := askAbout(t, st, g, edit("a.txt", "b.txt"), ""); !asked {
		t.Error("a patch of a.txt and b.txt went through on the approval of a.txt alone")
	}
	if _, asked := askAbout(t, st, g, edit("a.txt"), ""); asked {
		t.Error("an edit of a.txt, approved for the session, asked again")
	}
	if _, asked := askAbout(t, st, g, edit("b.txt"), store.ScopeSession); !asked {
		t.Fatal("the first edit of b.txt was not asked")
	}
	if a, asked := askAbout(t, st, g, edit("b.txt", "a.txt"), ""); asked || !a.Allow {
		t.Errorf("a patch of two files each approved for the session: asked %v, %+v", asked, a)
	}
	// The audit names each file's rule and the approval that covered it,
	// not the first file's alone.
	ctx := context.Background()
	reqs, _ := st.Requests(ctx, g.opts.Session.ID)
	approvalOf := map[string]int64{}
	for _, r := range reqs {
		if r.Scope == store.ScopeSession {
			approvalOf[filepath.Base(r.File)] = r.ID
		}
	}
	audit, _ := st.Audit(ctx, g.opts.Session.ID)
	var last store.Event
	for _, e := range audit {
		if e.Action == AuditPolicyAllowed {
			last = e
		}
	}
	var d struct {
		Approvals []struct {
			Rule    string `json:"rule"`
			Request int64  `json:"approved_by_request"`
			By      string `json:"by"`
		} `json:"approvals"`
	}
	if err := json.Unmarshal(last.Detail, &d); err != nil {
		t.Fatalf("the patch's auto-approval: %v: %s", err, last.Detail)
	}
	if len(d.Approvals) != 2 {
		t.Fatalf("the patch's auto-approval names %d approvals, want one per file: %s", len(d.Approvals), last.Detail)
	}
	for i, f := range []string{"b.txt", "a.txt"} {
		got := d.Approvals[i]
		if !strings.HasSuffix(got.Rule, f) || got.Request != approvalOf[f] || got.Request == 0 || got.By != "ana" {
			t.Errorf("file %s of the patch: the audit says %+v, want its rule and request %d approved by ana: %s", f, got, approvalOf[f], last.Detail)
		}
	}
}
