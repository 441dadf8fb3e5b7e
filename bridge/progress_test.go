package bridge

import (
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/runner"
)

func TestProgressLineCountsToolCallsTurnsAndKeepsTheLastMessage(t *testing.T) {
	var p progress
	steps := []struct {
		ev   runner.Event
		want string
	}{
		{runner.Event{Kind: "init"}, ""},
		{runner.Event{Kind: "message", Text: "I'll run\nthe tests"}, "0 tool calls · “I'll run the tests”"},
		{runner.Event{Kind: "message", Text: " "}, ""}, // gemini's chunks: the line is as it was
		{runner.Event{Kind: "message", Text: "first."}, "0 tool calls · “I'll run the tests first.”"},
		{runner.Event{Kind: "tool_use", Tool: "Bash"}, ""},
		{runner.Event{Kind: "tool_result", Tool: "Bash"}, "1 tool call · “I'll run the tests first.”"},
		{runner.Event{Kind: "approval", Tool: "Edit"}, ""},
		{runner.Event{Kind: "tool_result", Tool: "Edit"}, "2 tool calls · “I'll run the tests first.”"},
		{runner.Event{Kind: "message", Text: "   "}, ""},
		{runner.Event{Kind: "result", Text: "success"}, "2 tool calls, 1 turn done · “I'll run the tests first.”"},
		{runner.Event{Kind: "message", Text: "All done."}, "2 tool calls, 1 turn done · “All done.”"},
		{runner.Event{Kind: "result"}, "2 tool calls, 2 turns done · “All done.”"},
	}
	for i, s := range steps {
		if got := p.see(s.ev); got != s.want {
			t.Fatalf("step %d (%s): %q, want %q", i, s.ev.Kind, got, s.want)
		}
	}
	long := p.see(runner.Event{Kind: "message", Text: "Done: " + strings.Repeat("x ", 300)})
	if !strings.HasPrefix(long, "2 tool calls, 2 turns done · “Done: x") || len([]rune(long)) > 40+saidLen {
		t.Fatalf("a long message makes %q", long)
	}
	// Its next chunks are past what the line shows: nothing to write.
	if again := p.see(runner.Event{Kind: "message", Text: "more"}); again != "" {
		t.Fatalf("a chunk past the line's end makes %q", again)
	}
}
