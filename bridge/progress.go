package bridge

import (
	"fmt"
	"strings"

	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/runner"
)

// progress is a session's progress line, from its CLI's events: how many
// tool calls ended (each bridge reports a tool's result, also of a call it
// did not show starting, or one a person rejected), how many turns it
// finished (a turn ends with the CLI's result: the first answer, then one
// per continuation or steering message) and the start of the last thing it
// said, e.g.
//
//	4 tool calls, 1 turn done · “The tests pass; now the docs.”
//
// The store keeps it on the session (sessions.progress) for `agentinfra
// session show` and the console.
// It is not safe for concurrent use (the gate holds progMu).
type progress struct {
	tools int
	turns int
	// said is the last message; a message event right after another adds
	// to it (gemini streams a message in chunks).
	said     strings.Builder
	inSaying bool
	last     string // the line returned last: an unchanged line is not written again
}

// saidLen is how much of the last message the line keeps.
const saidLen = 100

// see counts ev and returns the new line ("" when the line stays as it was).
func (p *progress) see(ev runner.Event) string {
	saying := ev.Kind == "message"
	defer func() { p.inSaying = saying }()
	switch ev.Kind {
	case "tool_result":
		p.tools++
	case "result":
		p.turns++
	case "message":
		if !p.inSaying && strings.TrimSpace(ev.Text) == "" {
			saying = false // nothing said yet: the last message stays
			return ""
		}
		if !p.inSaying {
			p.said.Reset()
		}
		if p.said.Len() > 4*saidLen {
			return "" // the line shows the start of it only
		}
		p.said.WriteString(ev.Text)
	default:
		return ""
	}
	line := fmt.Sprintf("%d %s", p.tools, mdtext.Plural(p.tools, "tool call", "tool calls"))
	if p.turns > 0 {
		line += fmt.Sprintf(", %d %s done", p.turns, mdtext.Plural(p.turns, "turn", "turns"))
	}
	if said := strings.Join(strings.Fields(p.said.String()), " "); said != "" {
		line += " · “" + mdtext.Shorten(said, saidLen) + "”"
	}
	if line == p.last {
		return "" // a long message's later chunks, past what the line shows
	}
	p.last = line
	return line
}
