package dispatch

// Run (the whole dispatch lifecycle) with the REAL agent CLIs against fake
// model servers on 127.0.0.1 (see package fakemodel for the isolation).

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/internal/testing/fakemodel"
	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/workspace"
)

// e2eOptions dispatches id through a real CLI prepared by fakemodel.
func e2eOptions(c fakemodel.CLI, id, cli string) Options {
	return Options{
		ID: id, CLI: cli, Model: c.Model, Binary: c.Binary, Env: c.Env, CleanEnv: true,
		ExtraArgs: c.ExtraArgs, Timeout: fakemodel.Timeout, Now: func() time.Time { return fixedNow },
		Getenv: func(string) string { return "" },
	}
}

func checkReview(t *testing.T, ws *workspace.Workspace, before []byte, out Outcome, wantResponse string) {
	t.Helper()
	checkMatrix(t, before, readMatrix(t, ws), "a1a1a1")
	if st := taskOf(t, ws, "a1a1a1").Status; st != "REVIEW" || out.Outcome != OutcomeSuccess {
		t.Errorf("status %s outcome %s", st, out.Outcome)
	}
	note := readRel(t, ws, out.TrackingFile)
	if !strings.Contains(note, wantResponse) || !strings.Contains(note, "- Outcome: success") || !strings.Contains(note, "- Session: "+out.Result.SessionID) {
		t.Errorf("tracking note lacks the response/outcome/session:\n%s", note)
	}
	if !strings.Contains(readRel(t, ws, out.ResultFile), wantResponse) {
		t.Error("result json lacks the response")
	}
}

func checkBlocked(t *testing.T, ws *workspace.Workspace, before []byte, out Outcome, err error, reason ...string) {
	t.Helper()
	if !errors.Is(err, runner.ErrAgentFailed) {
		t.Fatalf("err = %v, want runner.ErrAgentFailed", err)
	}
	checkMatrix(t, before, readMatrix(t, ws), "a1a1a1")
	if st := taskOf(t, ws, "a1a1a1").Status; st != "BLOCKED" || out.Outcome != OutcomeFailed {
		t.Errorf("status %s outcome %s", st, out.Outcome)
	}
	note := readRel(t, ws, out.TrackingFile)
	for _, r := range reason {
		if !strings.Contains(note, r) {
			t.Errorf("tracking note lacks the reason %q:\n%s", r, note)
		}
	}
}

func TestRunRealGemini(t *testing.T) {
	t.Parallel()
	t.Run("success-then-resume", func(t *testing.T) {
		t.Parallel()
		fake := fakemodel.NewGemini(t, 0)
		ws := dispatchWorkspace(t)
		before := readMatrix(t, ws)
		gemini := fakemodel.Gemini(t, fake.URL) // one home: the second run resumes its session
		out, err := Run(context.Background(), ws, e2eOptions(gemini, "a1a1a1", runner.CLIGemini), nil)
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		checkReview(t, ws, before, out, "Hello from the fake gemini, turn 1.")
		calls := fake.Requests(":streamGenerateContent")
		if len(calls) != 1 || !strings.Contains(string(calls[0].Body), "Retry 3 times with backoff.") {
			t.Fatalf("the assembled prompt did not reach the model (%d calls)", len(calls))
		}

		// Continue the session: a REVIEW task may be dispatched again.
		mid := readMatrix(t, ws)
		opts := e2eOptions(gemini, "a1a1a1", runner.CLIGemini)
		opts.Session = out.Result.SessionID
		opts.TaskOverride = "Now add a test for the retry loop."
		out2, err := Run(context.Background(), ws, opts, nil)
		if err != nil {
			t.Fatalf("resume: %v", err)
		}
		checkMatrix(t, mid, readMatrix(t, ws), "")
		if out2.Result.SessionID != out.Result.SessionID || out2.Result.Response != "Hello from the fake gemini, turn 2." {
			t.Errorf("resume: session %q response %q", out2.Result.SessionID, out2.Result.Response)
		}
		if out2.TrackingFile == out.TrackingFile {
			t.Error("the resumed dispatch overwrote the first note")
		}
	})
	for _, tc := range []struct {
		name   string
		status int
		reason []string
	}{
		{"401", 401, []string{"API error 401: API key not valid (fake)", "- Exit code: 145"}},
		{"500", 500, []string{"API error 500: fake internal failure", "- Exit code: 244"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fake := fakemodel.NewGemini(t, tc.status)
			ws := dispatchWorkspace(t)
			before := readMatrix(t, ws)
			out, err := Run(context.Background(), ws, e2eOptions(fakemodel.Gemini(t, fake.URL), "a1a1a1", runner.CLIGemini), nil)
			checkBlocked(t, ws, before, out, err, tc.reason...)
			if n := len(fake.Requests(":streamGenerateContent")); n != 1 {
				t.Errorf("fake saw %d calls; general.maxAttempts=1 should stop retries", n)
			}
		})
	}
}

func TestRunRealClaude(t *testing.T) {
	t.Parallel()
	t.Run("success", func(t *testing.T) {
		t.Parallel()
		fake := fakemodel.NewClaude(t, 0)
		ws := dispatchWorkspace(t)
		before := readMatrix(t, ws)
		out, err := Run(context.Background(), ws, e2eOptions(fakemodel.Claude(t, fake.URL), "a1a1a1", runner.CLIClaude), nil)
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		checkReview(t, ws, before, out, "Hello from the fake claude.")
	})
	t.Run("401", func(t *testing.T) {
		t.Parallel()
		fake := fakemodel.NewClaude(t, 401)
		ws := dispatchWorkspace(t)
		before := readMatrix(t, ws)
		out, err := Run(context.Background(), ws, e2eOptions(fakemodel.Claude(t, fake.URL), "a1a1a1", runner.CLIClaude), nil)
		checkBlocked(t, ws, before, out, err, "API status 401")
	})
}

func TestRunRealCodex(t *testing.T) {
	t.Parallel()
	t.Run("success", func(t *testing.T) {
		t.Parallel()
		fake := fakemodel.NewCodex(t, 0)
		ws := dispatchWorkspace(t)
		before := readMatrix(t, ws)
		out, err := Run(context.Background(), ws, e2eOptions(fakemodel.Codex(t, fake.URL), "a1a1a1", runner.CLICodex), nil)
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		checkReview(t, ws, before, out, "Hello from the fake codex.")
	})
	t.Run("500", func(t *testing.T) {
		t.Parallel()
		fake := fakemodel.NewCodex(t, 500)
		ws := dispatchWorkspace(t)
		before := readMatrix(t, ws)
		out, err := Run(context.Background(), ws, e2eOptions(fakemodel.Codex(t, fake.URL), "a1a1a1", runner.CLICodex), nil)
		checkBlocked(t, ws, before, out, err, "- Reason: codex: ", "- Exit code: 1")
	})
}
