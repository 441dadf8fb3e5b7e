package codex

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentinfra/agentinfra/bridge"
	"github.com/agentinfra/agentinfra/runner"
)

// declined are the server requests of codex app-server (0.169's schema)
// that agentinfra knows and does not answer on a person's behalf: they are
// answered with an error (codex fails closed) and the run goes on. A method
// not listed here, nor among the approvals the bridge answers, is one the
// bridge does not understand: the run ends.
var declined = map[string]bool{
	"item/tool/requestUserInput":        true,
	"mcpServer/elicitation/request":     true,
	"item/tool/call":                    true,
	"account/chatgptAuthTokens/refresh": true,
	"attestation/generate":              true,
	"applyPatchApproval":                true, // the v1 approvals: the bridge speaks v2
	"execCommandApproval":               true,
}

// notUnderstood ends the run on a message the bridge does not understand:
// the raw message goes to the run's log (an error event) and its result.
func (b *codexBridge) notUnderstood(raw []byte) {
	err := bridge.NotUnderstood(runner.CLICodex, "a server request of app-server v2: item/commandExecution|fileChange|permissions/requestApproval with an itemId", raw)
	b.refusal.Refuse(b.g, err, b.Stop)
}

// openThread opens the run's thread: the thread of a resumed run
// (thread/resume), or a new one (thread/start) — also when codex cannot
// resume the thread. It returns the thread and the run's first message.
func (b *codexBridge) openThread(ctx context.Context, req bridge.Request, config map[string]any) (thread, prompt string, err error) {
	approval, sandbox := ThreadSettings(b.g.Policy())
	params := map[string]any{"cwd": req.Dir, "approvalPolicy": approval, "sandbox": sandbox,
		"approvalsReviewer": "user", "config": config}
	if req.Resume != "" {
		resume := map[string]any{"threadId": req.Resume, "excludeTurns": true}
		for k, v := range params {
			resume[k] = v
		}
		r, rerr := b.call(ctx, "thread/resume", resume)
		if id := threadID(r); rerr == nil && id != "" {
			return id, req.Prompt, nil
		}
		b.g.Event(runner.Event{Kind: "warning", Text: fmt.Sprintf("codex could not resume thread %s (%v): a new thread is told what was done", req.Resume, rerr)})
		req.Resume = ""
	}
	r, err := b.call(ctx, "thread/start", params)
	if err != nil {
		return "", "", err
	}
	return threadID(r), bridge.FirstPrompt(req), nil
}

func threadID(r json.RawMessage) string {
	var ts struct {
		Thread struct {
			ID string `json:"id"`
		} `json:"thread"`
	}
	json.Unmarshal(r, &ts)
	return ts.Thread.ID
}
