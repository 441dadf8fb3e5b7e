package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"sync"

	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/store"
)

// decided is what the gate decided about one tool call, kept by its native
// ID until the CLI says what it did with it.
type decided struct {
	mu        sync.Mutex
	requestID int64 // the request a person decided (0: none)
	allowed   bool
	done      bool // the decision is taken
	reported  bool // the CLI's outcome is recorded
	ran       bool // and it said the call ran
}

func (c *decided) request(id int64) {
	c.mu.Lock()
	c.requestID = id
	c.mu.Unlock()
}

func (c *decided) settle(ans Answer) {
	c.mu.Lock()
	c.allowed, c.done = ans.Allow, true
	if ans.Request.ID != 0 {
		c.requestID = ans.Request.ID
	}
	c.mu.Unlock()
}

// track starts the record of a call's decision (a call without a native
// ID is followed by no outcome: it is kept apart).
func (g *Gate) track(a Ask) *decided {
	c := &decided{}
	if a.NativeID == "" {
		return c
	}
	g.callsMu.Lock()
	g.calls[a.NativeID] = c
	g.callsMu.Unlock()
	return c
}

// Asked reports whether the call of that native ID was decided by the
// gate (by the policy, agentinfra's own rule or a person), and whether it
// was allowed.
func (g *Gate) Asked(nativeID string) (asked, allowed bool) {
	g.callsMu.Lock()
	c := g.calls[nativeID]
	g.callsMu.Unlock()
	if c == nil {
		return false, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.done, c.allowed
}

// Outcome is what a CLI did with a tool call, as it reports it afterwards.
type Outcome struct {
	// Ran: the tool ran (Failed: and ended in an error); neither: the CLI
	// refused it (a person's or the policy's no, or its own).
	Ran, Failed bool
	// By is who let it run or refused it, when the CLI says (claude's
	// tool_result_meta source: user_temporary, config, hook).
	By string
	// Status is the CLI's own word for it (codex's item status, gemini's
	// tool_call_update status), for the audit log.
	Status string
	// Unasked: the CLI says it decided by itself (claude's source config or
	// hook), even if a request for the call was sent.
	Unasked bool
}

// Report records what the CLI did with the tool call a (issue 27, item 9):
// after the decision, the outcome of the same native ID — tool_ran,
// tool_failed or tool_refused, with the request a person decided. A call
// that ran although nobody here allowed it (the CLI never asked, the CLI
// says it decided by itself, or it ran after a no) is ran_unasked, with
// what the policy would have said and a warning on the run's events. One
// outcome a call: a second report of it is ignored, unless it says a
// refused call ran.
func (g *Gate) Report(a Ask, o Outcome) {
	g.callsMu.Lock()
	c := g.calls[a.NativeID]
	if a.NativeID == "" {
		c = nil
	}
	g.callsMu.Unlock()
	var reqID int64
	allowed, asked := false, false
	if c != nil {
		c.mu.Lock()
		// One outcome a call; only a call said to run after a refusal is
		// recorded again, since that contradiction must show.
		if c.reported && (c.ran || !o.Ran) {
			c.mu.Unlock()
			return
		}
		c.reported, c.ran = true, o.Ran
		reqID, allowed, asked = c.requestID, c.allowed, c.done
		c.mu.Unlock()
	}
	detail := map[string]any{}
	if o.By != "" {
		detail["by"] = o.By
	}
	if o.Status != "" {
		detail["status"] = o.Status
	}
	act := AuditRefused
	switch {
	case o.Ran && (!asked || !allowed || o.Unasked):
		act = AuditRanUnasked
		v := g.Policy().Evaluate(action(a))
		detail["policy"] = v.Detail()
		why := "the CLI ran it without asking"
		switch {
		case asked && !allowed:
			why = "the CLI ran it although agentinfra said no"
		case asked && o.Unasked:
			why = "the CLI ran it on its own decision (" + o.By + "), not agentinfra's"
		}
		detail["why"] = why
		g.Event(runner.Event{Kind: "warning", Tool: a.Tool, Text: fmt.Sprintf("%s: %s %s (policy: %s)", why, a.Tool, describe(a), v.Rule)})
	case o.Ran && o.Failed:
		act = AuditFailed
	case o.Ran:
		act = AuditRan
	case !asked:
		detail["unasked"] = true // refused by the CLI itself
	}
	g.record("agent:"+g.opts.Session.CLI, store.SurfaceAgent, act, reqID, a, detail)
}

// describe is what a call is about, in one line: its command, file or URL.
func describe(a Ask) string {
	for _, s := range []string{a.Command, a.File, a.URL} {
		if s != "" {
			return s
		}
	}
	return ""
}

// record writes one audit event of a call: what it is (tool, native ID,
// command, files, URL) and detail.
func (g *Gate) record(actor, surface, act string, requestID int64, a Ask, detail map[string]any) {
	d := maps.Clone(detail)
	if d == nil {
		d = map[string]any{}
	}
	d["tool"] = a.Tool
	for k, v := range map[string]string{"native_id": a.NativeID, "command": a.Command, "file": a.File, "url": a.URL} {
		if v != "" {
			d[k] = v
		}
	}
	if len(a.Files) > 0 {
		d["files"] = a.Files
	}
	b, _ := json.Marshal(d)
	g.opts.Store.Record(context.Background(), store.Event{SessionID: g.opts.Session.ID, RequestID: requestID, Actor: actor, Surface: surface, Action: act, Detail: b})
}
