package fleet

// End-to-end tests of the fleet with the REAL agent CLIs (installed by
// scripts/install-tools.sh) talking to the fake model servers of
// internal/fakemodel on 127.0.0.1, under the real supervisor (this test
// binary, as helpers_test.go sets up). They skip when a CLI is missing and
// fail when it is missing under AGENTINFRA_E2E=1.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/internal/fakemodel"
)

// realCLIFleet is a fleet whose runs start the real CLI prepared by fakemodel.
func realCLIFleet(t *testing.T, c fakemodel.CLI) *Fleet {
	t.Helper()
	return New(newRepo(t), Options{
		SupervisorArgv: []string{os.Args[0]},
		SupervisorEnv:  []string{"FLEET_TEST_SUPERVISE=1"},
		Binary:         c.Binary,
		Env:            c.Env,
		KillGrace:      2 * time.Second,
	})
}

// waitReal polls Show until the agent has one of want; real CLIs on a
// loaded machine take seconds, so the bound is the fake model's.
func waitReal(t *testing.T, f *Fleet, name string, seen map[Status]bool, want ...Status) Agent {
	t.Helper()
	deadline := time.Now().Add(fakemodel.Timeout)
	for {
		a, err := f.Show(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		if seen != nil {
			seen[a.Status] = true
		}
		if slices.Contains(want, a.Status) {
			return a
		}
		if time.Now().After(deadline) {
			waitStatus(t, f, name, want...) // fails with the run's logs
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// resultArgv reads the argv the supervisor recorded for a run.
func resultArgv(t *testing.T, f *Fleet, name, runID string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.p.runsDir(name), runID+".result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Argv []string `json:"argv"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r.Argv
}

// checkRealCLI: create → starting/busy → idle with the spec's run completed
// and its CLI session recorded; the next task resumes that session (the CLI
// got the resume argument, and the model saw the first turn again).
func checkRealCLI(t *testing.T, cli string, fake *fakemodel.Server, c fakemodel.CLI, modelPath, resumeFlag, config string) {
	f := realCLIFleet(t, c)
	if config != "" {
		fakemodel.WriteFile(t, filepath.Join(f.ws.AgentDir(), "config.yaml"), config)
	}
	ctx := context.Background()
	a, err := f.Create(ctx, CreateInput{Name: "papi", CLI: cli, Spec: "keep the tests green MARK-SPEC"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != StatusStarting && a.Status != StatusBusy || a.CLI != cli {
		t.Fatalf("right after create: %s with cli %s", a.Status, a.CLI)
	}
	seen := map[Status]bool{}
	waitReal(t, f, "papi", seen, StatusBusy, StatusIdle)
	idle := waitReal(t, f, "papi", seen, StatusIdle)
	if !seen[StatusBusy] {
		t.Errorf("the agent was never seen busy while the real %s ran (saw %v)", cli, seen)
	}
	if idle.CurrentTask != nil {
		t.Fatalf("idle agent has a current task %+v", idle.CurrentTask)
	}
	h, err := f.History(ctx, "papi", 1, DefaultPageSize)
	if err != nil {
		t.Fatal(err)
	}
	first := h.Tasks[0]
	if h.TotalCount != 1 || first.Status != RunCompleted || first.ExitCode == nil || *first.ExitCode != 0 || len(first.SessionID) < 8 {
		t.Fatalf("the spec's run = %+v", first)
	}
	calls := fake.Requests(modelPath)
	if len(calls) == 0 || !strings.Contains(string(calls[len(calls)-1].Body), "MARK-SPEC") {
		t.Fatalf("the spec did not reach the fake model (%d calls)", len(calls))
	}
	before := len(calls)

	if _, err := f.Start(ctx, StartInput{Name: "papi", Text: "now add a test MARK-NEXT"}); err != nil {
		t.Fatal(err)
	}
	waitReal(t, f, "papi", nil, StatusIdle)
	h, err = f.History(ctx, "papi", 1, DefaultPageSize)
	if err != nil {
		t.Fatal(err)
	}
	second := h.Tasks[0]
	if h.TotalCount != 2 || second.Status != RunCompleted || second.SessionID != first.SessionID {
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
}

func TestFleetRealGemini(t *testing.T) {
	t.Parallel()
	fake := fakemodel.NewGemini(t, 0)
	checkRealCLI(t, "gemini", fake, fakemodel.Gemini(t, fake.URL), ":streamGenerateContent", "--resume", "")
}

func TestFleetRealClaude(t *testing.T) {
	t.Parallel()
	fake := fakemodel.NewClaude(t, 0)
	// claude refuses bypassPermissions (the fleet's default yolo) as root,
	// which these tests often are in containers: auto_edit works for anyone.
	checkRealCLI(t, "claude", fake, fakemodel.Claude(t, fake.URL), "/v1/messages", "--resume", "fleet:\n  approval_mode: auto_edit\n")
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
	checkRealCLI(t, "codex", fake, c, "/v1/responses", "resume", "")
}
