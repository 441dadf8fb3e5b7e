package local

// End-to-end tests of the fleet with the REAL agent CLIs (installed by
// scripts/install-tools.sh) talking to the fake model servers of
// internal/testing/fakemodel on 127.0.0.1, under the real supervisor (this test
// binary, as helpers_test.go sets up). They skip when a CLI is missing and
// fail when it is missing under AGENTINFRA_E2E=1.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/internal/testing/fakemodel"
	"github.com/agentinfra/agentinfra/internal/testing/poll"
)

// realCLIFleet is a fleet whose runs start the real CLI prepared by fakemodel.
func realCLIFleet(t *testing.T, c fakemodel.CLI) *Fleet {
	t.Helper()
	f := New(newRepo(t), Options{
		SupervisorArgv: []string{os.Args[0]},
		SupervisorEnv:  []string{"FLEET_TEST_SUPERVISE=1"},
		Binary:         c.Binary,
		Env:            c.Env,
		KillGrace:      2 * time.Second,
	})
	stopRunsAtCleanup(t, f)
	return f
}

// waitReal polls Show until the agent has one of want; real CLIs on a
// loaded machine take seconds, so the bound is the fake model's.
func waitReal(t *testing.T, f *Fleet, name string, seen map[fleet.Status]bool, want ...fleet.Status) fleet.Agent {
	t.Helper()
	var a fleet.Agent
	if !poll.Until(fakemodel.Timeout, func() bool {
		var err error
		if a, err = f.Show(context.Background(), name); err != nil {
			t.Fatal(err)
		}
		if seen != nil {
			seen[a.Status] = true
		}
		return slices.Contains(want, a.Status)
	}) {
		return waitStatus(t, f, name, want...) // fails with the run's logs
	}
	return a
}

// resultArgv reads the argv the supervisor recorded for a run.
func resultArgv(t *testing.T, f *Fleet, name, runID string) []string {
	t.Helper()
	rec, err := f.storedRecord(context.Background(), runID)
	if err != nil || rec == nil {
		t.Fatalf("the record of run %s: %v", runID, err)
	}
	return rec.Argv
}

// testRole is the text of the agents' role (.agent/agents/coder.md) in the
// real-CLI tests: it must reach the model as the system prompt.
const testRole = "ROLE-MARK-5d2: you are the fleet's coder.\nCommit in small steps."

// checkRealCLI: create → starting/busy → idle with the spec's run completed
// and its CLI session recorded; the next task resumes that session (the CLI
// got the resume argument, and the model saw the first turn again); a matrix
// task ends in REVIEW. In every model call the role is the system prompt
// (after the CLI's own, ownPrompt; "" where the role replaces it) and never
// in a user message.
func checkRealCLI(t *testing.T, cli string, fake *fakemodel.Server, c fakemodel.CLI, modelPath, resumeFlag, ownPrompt, config string) {
	f := realCLIFleet(t, c)
	if config != "" {
		fakemodel.WriteFile(t, filepath.Join(f.ws.AgentDir(), "config.yaml"), config)
	}
	fakemodel.WriteFile(t, filepath.Join(f.ws.AgentDir(), "agents", "coder.md"), "---\ndescription: codes\n---\n\n"+testRole+"\n")
	ctx := context.Background()
	a, err := f.Create(ctx, fleet.CreateInput{Name: "papi", CLI: cli, Spec: "keep the tests green MARK-SPEC"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != fleet.StatusStarting && a.Status != fleet.StatusBusy || a.CLI != cli {
		t.Fatalf("right after create: %s with cli %s", a.Status, a.CLI)
	}
	seen := map[fleet.Status]bool{}
	waitReal(t, f, "papi", seen, fleet.StatusBusy, fleet.StatusIdle)
	idle := waitReal(t, f, "papi", seen, fleet.StatusIdle)
	if !seen[fleet.StatusBusy] {
		t.Errorf("the agent was never seen busy while the real %s ran (saw %v)", cli, seen)
	}
	if idle.CurrentRun != nil {
		t.Fatalf("idle agent has a current task %+v", idle.CurrentRun)
	}
	h, err := f.History(ctx, "papi", 1, fleet.DefaultPageSize)
	if err != nil {
		t.Fatal(err)
	}
	first := h.Tasks[0]
	if h.TotalCount != 1 || first.Status != fleet.RunCompleted || first.ExitCode == nil || *first.ExitCode != 0 || len(first.SessionID) < 8 {
		t.Fatalf("the spec's run = %+v", first)
	}
	calls := fake.Requests(modelPath)
	if len(calls) == 0 || !strings.Contains(string(calls[len(calls)-1].Body), "MARK-SPEC") {
		t.Fatalf("the spec did not reach the fake model (%d calls)", len(calls))
	}
	before := len(calls)

	if _, err := f.Start(ctx, fleet.StartInput{Name: "papi", Text: "now add a test MARK-NEXT"}); err != nil {
		t.Fatal(err)
	}
	waitReal(t, f, "papi", nil, fleet.StatusIdle)
	h, err = f.History(ctx, "papi", 1, fleet.DefaultPageSize)
	if err != nil {
		t.Fatal(err)
	}
	second := h.Tasks[0]
	if h.TotalCount != 2 || second.Status != fleet.RunCompleted || second.SessionID != first.SessionID {
		t.Fatalf("the second run = %+v (first session %s)", second, first.SessionID)
	}
	argv := strings.Join(resultArgv(t, f, "papi", second.ID), "\x00")
	if !strings.Contains(argv, resumeFlag+"\x00"+first.SessionID) {
		t.Errorf("the second run did not resume session %s: argv %q", first.SessionID, argv)
	}
	calls = fake.Requests(modelPath)
	if len(calls) <= before {
		t.Fatalf("the second run made no model call")
	}
	last := string(calls[len(calls)-1].Body)
	if !strings.Contains(last, "MARK-NEXT") || !strings.Contains(last, "MARK-SPEC") {
		t.Errorf("the resumed conversation lacks the first turn or the new task")
	}

	// A matrix task: the standard prompt without the mode's text, the role
	// as the system prompt; the task ends in REVIEW.
	before = len(calls)
	if _, err := f.Start(ctx, fleet.StartInput{Name: "papi", TaskID: "c3c3c3"}); err != nil {
		t.Fatal(err)
	}
	waitReal(t, f, "papi", nil, fleet.StatusIdle)
	if task, _ := loadDoc(t, f.ws).Task("c3c3c3"); task.Status != "REVIEW" {
		t.Errorf("the matrix task ended %s, want REVIEW", task.Status)
	}
	calls = fake.Requests(modelPath)
	if len(calls) <= before {
		t.Fatalf("the matrix task's run made no model call")
	}
	r, err := calls[len(calls)-1].Roles()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.User, "Fix the typo in README") || !strings.Contains(r.User, "# Reporting protocol") || strings.Contains(r.User, "# Agent mode") {
		t.Errorf("the matrix task's user prompt is not the standard prompt without its mode:\n%s", r.User)
	}
	for i, call := range calls {
		checkRole(t, i, call, ownPrompt)
	}
}

// checkRole: the call carries testRole in its system part, once, after the
// CLI's own system prompt (own; "" when the role replaces it), and no user
// message carries it.
func checkRole(t *testing.T, i int, call fakemodel.Seen, own string) {
	t.Helper()
	r, err := call.Roles()
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(r.System, testRole); n != 1 {
		t.Errorf("call %d: the role is %d times in the system part, want once", i, n)
	}
	if strings.Contains(r.User, "ROLE-MARK") {
		t.Errorf("call %d: the role reached a user message", i)
	}
	switch at := strings.Index(r.System, own); {
	case own == "":
		if strings.TrimSpace(r.System) != testRole {
			t.Errorf("call %d: the system instruction should be the role alone, got %.300q", i, r.System)
		}
	case at < 0:
		t.Errorf("call %d: the CLI's own system prompt (%q) is gone", i, own)
	case at > strings.Index(r.System, testRole):
		t.Errorf("call %d: the role comes before the CLI's own system prompt", i)
	}
}

func TestFleetRealGemini(t *testing.T) {
	t.Parallel()
	fake := fakemodel.NewGemini(t, 0)
	checkRealCLI(t, "gemini", fake, fakemodel.Gemini(t, fake.URL), ":streamGenerateContent", "--resume", "", "")
}

func TestFleetRealClaude(t *testing.T) {
	t.Parallel()
	fake := fakemodel.NewClaude(t, 0)
	// claude refuses bypassPermissions (the fleet's default yolo) as root,
	// which these tests often are in containers: auto_edit works for anyone.
	checkRealCLI(t, "claude", fake, fakemodel.Claude(t, fake.URL), "/v1/messages", "--resume", "You are Claude Code", "fleet:\n  approval_mode: auto_edit\n")
}

// codex takes its model provider from -c flags in the runner's tests; the
// fleet passes no extra arguments, so the same settings go in CODEX_HOME's
// config.toml.
func TestFleetRealCodex(t *testing.T) {
	t.Parallel()
	fake := fakemodel.NewCodex(t, 0)
	c := fakemodel.Codex(t, fake.URL)
	fakemodel.WriteFile(t, filepath.Join(c.Home, ".codex", "config.toml"), fmt.Sprintf(`check_for_update_on_startup = false
model_provider = "fake"
[analytics]
enabled = false
[features]
plugins = false
remote_plugin = false
apps = false
[model_providers.fake]
name = "fake"
base_url = %q
wire_api = "responses"
env_key = "FAKE_OPENAI_KEY"
request_max_retries = 0
stream_max_retries = 0
`, fake.URL+"/v1"))
	// (codex's own prompt for its default model, which the fleet leaves it.)
	checkRealCLI(t, "codex", fake, c, "/v1/responses", "resume", "You are Codex, an agent", "")
}
