package local

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/agentcli"
	"github.com/agentinfra/agentinfra/agentcli/gemini"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/internal/testing/fakemodel"
)

// TestGeminiPromptOverTheLimitIsRefused: with the real gemini against the
// fake model, a spec whose prompt is just under gemini's limit (128 KiB as
// JSON text) runs to the end, the model seeing all of it; a task or a spec
// over it is refused up front — 400 naming the field and the limit,
// nothing created, no run started (issue 20: over ~256 KiB gemini ends
// before its output is written out, and the run had no result).
func TestGeminiPromptOverTheLimitIsRefused(t *testing.T) {
	t.Parallel()
	fake := fakemodel.NewGemini(t, 0)
	f := realCLIFleet(t, fakemodel.Gemini(t, fake.URL))
	ctx := context.Background()
	words := func(kib int) string { return strings.Repeat("word ", kib*1024/5) }

	// The first run's prompt holds the spec twice: as the agent's
	// standing objective and as its task.
	spec := "MARK-HEAD " + words(gemini.PromptLimit/1024/2-4) + " MARK-TAIL"
	if _, err := f.Create(ctx, fleet.CreateInput{Name: "big", CLI: "gemini", Spec: spec}); err != nil {
		t.Fatalf("a spec under the limit (%d bytes) is refused: %v", len(spec), err)
	}
	waitReal(t, f, "big", nil, fleet.StatusIdle)
	h, err := f.History(ctx, "big", 1, 20)
	if err != nil {
		t.Fatal(err)
	}
	if h.TotalCount != 1 || h.Tasks[0].Status != fleet.RunCompleted || h.Tasks[0].ExitCode == nil || *h.Tasks[0].ExitCode != 0 {
		t.Fatalf("the spec's run under the limit: %+v", h.Tasks)
	}
	calls := fake.Requests(":streamGenerateContent")
	if len(calls) == 0 || !strings.Contains(string(calls[0].Body), "MARK-TAIL") {
		t.Fatalf("the model did not see the whole prompt (%d calls)", len(calls))
	}

	// Over the limit with the spec in the prompt: a task, then a spec. A
	// text of quotes counts twice (escaped), so 40 KiB of them (with the spec) is over too.
	for _, text := range []string{words(gemini.PromptLimit/1024/2 + 4), strings.Repeat(`"`, 40*1024)} {
		_, err = f.Start(ctx, fleet.StartInput{Name: "big", Text: text})
		wantCode(t, err, fleet.CodeBadInput, "task_description")
		if !strings.Contains(err.Error(), "limit of 131072 bytes (128 KiB)") {
			t.Errorf("the refusal does not name the limit: %v", err)
		}
	}
	if a, _ := f.Show(ctx, "big"); a.Status != fleet.StatusIdle || a.CurrentRun != nil {
		t.Errorf("after the refused start: %s, run %+v", a.Status, a.CurrentRun)
	}
	if h, _ := f.History(ctx, "big", 1, 20); h.TotalCount != 1 {
		t.Errorf("a refused start left a run: %+v", h.Tasks)
	}
	_, err = f.Create(ctx, fleet.CreateInput{Name: "huge", CLI: "gemini", Spec: words(300)})
	wantCode(t, err, fleet.CodeBadInput, "spec")
	if _, serr := os.Stat(f.p.agentDir("huge")); serr == nil {
		t.Error("a refused create left the agent's folder")
	}
	if _, serr := os.Stat(filepath.Join(filepath.Dir(f.ws.Root), filepath.Base(f.ws.Root)+"-agents", "huge")); serr == nil {
		t.Error("a refused create left a worktree")
	}
	// claude takes what gemini cannot (the limit is gemini's).
	if err := agentcli.CheckPrompt("claude", words(300)); err != nil {
		t.Errorf("claude refused: %v", err)
	}
}
