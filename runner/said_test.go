package runner_test

import (
	"slices"
	"testing"

	"github.com/agentinfra/agentinfra/runner"
)

// A page shows what a failed CLI said apart from the rest of the error:
// SaidOf gives back the lines Said quoted, its secrets still redacted.
func TestSaidOfGivesBackWhatTheCLISaid(t *testing.T) {
	tail := "starting\n\nError: --dangerously-skip-permissions cannot be used with root/sudo privileges\nkey sk-ant-secret rejected\nsee --help\n"
	errText := runner.Said("claude", "claude exited with code 1", tail, []string{"ANTHROPIC_API_KEY=sk-ant-secret"})
	head, said := runner.SaidOf("claude", "failed: "+errText)
	want := []string{"Error: --dangerously-skip-permissions cannot be used with root/sudo privileges", "key [REDACTED] rejected", "see --help"}
	if head != "failed: claude exited with code 1" || !slices.Equal(said, want) {
		t.Errorf("SaidOf(%q) = %q, %q; want the error and %q", errText, head, said, want)
	}
	for _, c := range []struct{ cli, text string }{{"claude", "completed"}, {"gemini", errText}, {"", errText}} {
		if head, said := runner.SaidOf(c.cli, c.text); head != c.text || said != nil {
			t.Errorf("SaidOf(%q, %q) = %q, %q; want the text and nothing said", c.cli, c.text, head, said)
		}
	}
}
