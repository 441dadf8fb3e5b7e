package bridge

import (
	"context"
	"fmt"

	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/store"
)

// noteNative records the CLI's own session in the store as soon as the CLI
// says it (its init event), so that a run whose supervisor dies can be
// resumed on it.
func (g *Gate) noteNative(ev runner.Event) {
	if ev.Kind != "init" || ev.SessionID == "" {
		return
	}
	g.nativeMu.Lock()
	defer g.nativeMu.Unlock()
	if g.native == ev.SessionID {
		return
	}
	if err := g.opts.Store.SetNativeSession(context.Background(), g.opts.Session.ID, ev.SessionID); err == nil {
		g.native = ev.SessionID
	}
}

// reapplied is the answer to a call the CLI asks about again after a
// resume when a person decided it already (store.TakeDecision: the same
// call, or the same action whose decision never reached the CLI): that
// decision, without asking anyone again.
func (g *Gate) reapplied(a Ask) (Answer, bool) {
	r, ok, err := g.opts.Store.TakeDecision(context.Background(), g.opts.Session.ID, store.Request{NativeID: a.NativeID, Kind: a.Kind, Tool: a.Tool,
		ToolInput: a.ToolInput, Command: a.Command, File: a.File, Diff: a.Diff, URL: a.URL})
	if err != nil || !ok {
		return Answer{}, false
	}
	g.Event(runner.Event{Kind: "approval", Tool: a.Tool, Text: fmt.Sprintf("request %d was %s before the run was resumed: %s, not asked again", r.ID, r.Status, a.Title)})
	return answerOf(r), true
}

// delivering records that the decision of r goes to the CLI now.
func (g *Gate) delivering(r store.Request) {
	if r.Status == store.StatusApproved || r.Status == store.StatusRejected {
		g.opts.Store.MarkDelivered(context.Background(), g.opts.Session.ID, r.ID)
	}
}

// FirstPrompt is the first message of a run: the resume message of a
// resumed session, the task's prompt with what was done before for a
// resumed run without one, else the prompt.
func FirstPrompt(req Request) string {
	if req.Resume == "" && req.PromptIfNew != "" {
		return req.PromptIfNew
	}
	return req.Prompt
}
