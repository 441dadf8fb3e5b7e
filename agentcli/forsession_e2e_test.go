package agentcli

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentinfra/agentinfra/bridge"
	"github.com/agentinfra/agentinfra/internal/testing/fakemodel"
	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision/policy"
)

// touchTwice is a model that runs `touch ok.txt` twice (the second after
// the first one's result), then says done.
func touchTwice() fakemodel.Script {
	var results atomic.Int32
	return func(a fakemodel.Ask) fakemodel.Answer {
		switch {
		case !a.ToolCall && strings.Contains(a.User, "touch"):
			results.Store(0)
			return fakemodel.Answer{Shell: "touch ok.txt"}
		case a.ToolCall && results.Add(1) == 1:
			return fakemodel.Answer{Shell: "touch ok.txt"}
		}
		return fakemodel.Answer{Text: "done"}
	}
}

// runDeciding runs the CLI in session ses while a person in another
// process answers each request of the session as it comes with verdict.
func (s *setup) runDeciding(t *testing.T, c cliCase, ses store.Session, verdict string) runner.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), fakemodel.Timeout)
	defer cancel()
	pol := policy.Load(s.cli.Dir, s.paths)
	var wg sync.WaitGroup
	wg.Add(1)
	watch, stop := context.WithCancel(ctx)
	go func() {
		defer wg.Done()
		changes, _ := s.st.Changes(watch)
		decided := map[int64]bool{}
		for range changes {
			p, _ := s.st.Pending(watch)
			for _, r := range p {
				if r.SessionID == ses.ID && !decided[r.ID] {
					decided[r.ID] = true
					decideFromAnotherProcess(t, s.st.Path(), r.ID, verdict, "")
				}
			}
		}
	}()
	res, err := RunSupervised(ctx, bridge.Request{CLI: c.name, Binary: s.cli.Binary, Model: s.cli.Model, Dir: s.cli.Dir, Env: s.cli.Env, CleanEnv: true,
		ExtraArgs: s.cli.ExtraArgs, Prompt: "Please touch ok.txt"},
		bridge.Options{Store: s.st, Session: ses, Policy: func() *policy.Policy { return pol }})
	stop()
	wg.Wait()
	if err != nil {
		t.Fatalf("run: %v (%+v)", err, res)
	}
	return res
}

// Approved for the session, the command the CLI asks for again in that
// session runs without asking (the audit log names the approval); the
// same command in another session of the same workspace still asks.
func TestApproveForTheSessionApprovesTheSameCommandAgain(t *testing.T) {
	forEachCLI(t, func(t *testing.T, c cliCase) {
		s := newScriptedSetup(t, c, touchTwice(), "", "")
		ctx, ses := context.Background(), s.ses
		s.runDeciding(t, c, ses, "approve-session")
		if !s.fileExists() {
			t.Fatal("approved for the session, but ok.txt does not exist")
		}
		rs, _ := s.st.Requests(ctx, ses.ID)
		if len(rs) != 1 || rs[0].Status != store.StatusApproved || rs[0].Scope != store.ScopeSession {
			t.Fatalf("the second touch asked a person: requests %+v", rs)
		}
		audit, _ := s.st.Audit(ctx, ses.ID)
		var auto []store.Event
		for _, e := range audit {
			if e.Action == "auto_approved" && e.RequestID == rs[0].ID {
				auto = append(auto, e)
			}
		}
		if len(auto) != 1 {
			t.Fatalf("auto-approvals naming request %d: %d; audit %+v", rs[0].ID, len(auto), audit)
		}
		var d map[string]any
		json.Unmarshal(auto[0].Detail, &d)
		if d["scope"] != store.ScopeSession || d["rule"] != "commands: touch ok.txt" || d["by"] != "ana" {
			t.Errorf("the auto-approval's detail %v", d)
		}

		// Another session (the same workspace, store and command) asks for
		// both touches.
		other, err := s.st.CreateSession(ctx, store.NewSession{Owner: "ana", Workspace: s.cli.Dir, CLI: c.name})
		if err != nil {
			t.Fatal(err)
		}
		if other, err = s.st.SetSessionStatus(ctx, other.ID, store.Transition{To: store.SessionActive, By: "ana"}); err != nil {
			t.Fatal(err)
		}
		s.runDeciding(t, c, other, "approve")
		if rs, _ := s.st.Requests(ctx, other.ID); len(rs) != 2 {
			t.Fatalf("another session asked %d times, want 2: %+v", len(rs), rs)
		}
	})
}
