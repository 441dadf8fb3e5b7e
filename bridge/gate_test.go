package bridge

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/store"
)

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
