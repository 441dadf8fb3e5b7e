package claude

import (
	"bytes"
	"encoding/json"

	"github.com/agentinfra/agentinfra/bridge"
	"github.com/agentinfra/agentinfra/runner"
)

// canUseToolOf reads a control request of claude's as the one it may send
// a host that registered no hooks and no SDK MCP servers: can_use_tool,
// with the request's ID, the tool's name and its input. Anything else would
// wait for an answer the bridge cannot give (a new subtype, a renamed
// field): ok false.
func canUseToolOf(c claudeControl) (canUseTool, bool) {
	var r canUseTool
	if c.RequestID == "" || json.Unmarshal(c.Request, &r) != nil {
		return r, false
	}
	in := bytes.TrimSpace(r.Input)
	ok := r.Subtype == "can_use_tool" && r.ToolName != "" && len(in) > 0 && in[0] == '{'
	return r, ok
}

// notUnderstood ends the run on a message the bridge does not understand:
// the raw message goes to the run's log (an error event) and its result.
func (b *claudeBridge) notUnderstood(line []byte) {
	err := bridge.NotUnderstood(runner.CLIClaude, `a control_request "can_use_tool" with request_id, tool_name and input`, line)
	b.refusal.Refuse(b.g, err, b.Stop)
}
