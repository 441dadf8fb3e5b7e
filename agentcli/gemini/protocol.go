package gemini

import (
	"context"
	"encoding/json"
	"fmt"

	acp "github.com/coder/acp-go-sdk"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/bridge"
	"github.com/agentinfra/agentinfra/runner"
)

// ProtocolVersion is the version of ACP the bridge speaks: v1 (the ACP Go
// SDK's). ACP's v2 is a draft (turn completion, patch updates, no file
// system API) that the bridge does not speak yet.
const ProtocolVersion = acp.ProtocolVersionNumber

// checkProtocol refuses an agent that answered initialize with a protocol
// version the bridge does not speak (ACP: the agent answers the client's
// version when it supports it, else its own latest), by name.
func checkProtocol(init acp.InitializeResponse) error {
	if init.ProtocolVersion == ProtocolVersion {
		return nil
	}
	agent := "gemini"
	if init.AgentInfo != nil && init.AgentInfo.Version != "" {
		agent += " " + init.AgentInfo.Version
	}
	raw, _ := json.Marshal(init)
	return &agenterr.Error{Kind: agenterr.Unavailable, Err: bridge.ErrProtocol, Reason: fmt.Sprintf(
		"%s speaks ACP protocol version %d; agentinfra's bridge speaks ACP version %d only (ACP v2 is a draft it does not speak yet): the run is refused; run `agentinfra doctor` (initialize answered %s)",
		agent, init.ProtocolVersion, ProtocolVersion, bridge.Clip(raw))}
}

// openSession opens the run's ACP session: the session of a resumed run
// (session/load, when the agent offers loadSession), else a new one — told
// what was done before when the run is resumed. It returns the first
// prompt.
func (b *geminiBridge) openSession(ctx context.Context, req bridge.Request, canLoad bool) (string, error) {
	if req.Resume != "" && canLoad {
		b.mu.Lock()
		b.loading = true
		b.mu.Unlock()
		_, err := b.conn.LoadSession(ctx, acp.LoadSessionRequest{SessionId: acp.SessionId(req.Resume), Cwd: req.Dir, McpServers: []acp.McpServer{}})
		b.mu.Lock()
		b.loading = false
		b.mu.Unlock()
		if err == nil {
			b.session = acp.SessionId(req.Resume)
			return req.Prompt, nil
		}
		b.g.Event(runner.Event{Kind: "warning", Text: fmt.Sprintf("gemini could not load session %s (%v): a new session is told what was done", req.Resume, err)})
	} else if req.Resume != "" {
		b.g.Event(runner.Event{Kind: "warning", Text: "gemini does not offer session/load (loadSession): a new session is told what was done"})
	}
	req.Resume = ""
	sess, err := b.conn.NewSession(ctx, acp.NewSessionRequest{Cwd: req.Dir, McpServers: []acp.McpServer{}})
	if err != nil {
		return "", err
	}
	b.session = sess.SessionId
	return bridge.FirstPrompt(req), nil
}

// notUnderstood ends the run on a message the bridge does not understand:
// the message (as the SDK read it) goes to the run's log (an error event)
// and its result.
func (b *geminiBridge) notUnderstood(msg any) {
	raw, _ := json.Marshal(msg)
	err := bridge.NotUnderstood(runner.CLIGemini, "session/request_permission with a toolCallId and options of the kinds allow_once and reject_once", raw)
	b.refusal.Refuse(b.g, err, b.Stop)
}
