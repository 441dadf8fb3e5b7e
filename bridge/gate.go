package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision/policy"
)

// ask is one permission request of a CLI, in agentinfra's terms.
type Ask struct {
	NativeID  string
	Kind      string // store.Kind*
	Tool      string
	ToolInput string
	Command   string
	File      string
	Diff      string
	URL       string
	Title     string
}

// answer is what goes back to the CLI.
type Answer struct {
	Allow bool
	// Message is the deny reason for the model (or "" when allowed).
	Message string
	// Reason is the person's own words ("" when none), for the CLIs that
	// carry them only as a next message.
	Reason   string
	ByPolicy bool
	Request  store.Request
}

// gate turns a CLI's permission requests into decisions: the policy's,
// else a person's through the store.
type Gate struct {
	opts Options
	// one pending request per session: a second ask waits for the first.
	mu sync.Mutex
	// seen: native IDs of tool calls that were asked about (the others
	// ran on the CLI's own rules, which the audit log records).
	seenMu sync.Mutex
	seen   map[string]bool
	evMu   sync.Mutex
	// prog is the session's progress line (sessions.progress); progMu
	// keeps its writes in the order of the events.
	progMu sync.Mutex
	prog   progress
}

func newGate(opts Options) *Gate { return &Gate{opts: opts, seen: map[string]bool{}} }

// Root is the session's workspace: the folder a CLI's relative paths are
// read from (an edit's diff is computed against the file there).
func (g *Gate) Root() string { return g.opts.Session.Workspace }

// KillGrace is the time between SIGTERM and SIGKILL when the CLI is stopped.
func (g *Gate) KillGrace() time.Duration { return g.opts.KillGrace }

// Policy is the policy in force (a broken or missing one asks a person for
// everything).
func (g *Gate) Policy() *policy.Policy {
	if g.opts.Policy != nil {
		if p := g.opts.Policy(); p != nil {
			return p
		}
	}
	return &policy.Policy{Root: g.opts.Session.Workspace, AskAll: true}
}

func (g *Gate) Event(ev runner.Event) {
	ev.Text = runner.ClipEventText(ev.Text)
	// The session's last tool and progress line (one write per event that
	// changes them; a failed write must not stop the run).
	tool := ""
	if ev.Kind == "tool_use" || ev.Kind == "tool_result" {
		tool = ev.Tool
	}
	g.progMu.Lock()
	if line := g.prog.see(ev); line != "" || tool != "" {
		g.opts.Store.SetProgress(context.Background(), g.opts.Session.ID, tool, line)
	}
	g.progMu.Unlock()
	if g.opts.OnEvent != nil {
		g.evMu.Lock()
		defer g.evMu.Unlock()
		g.opts.OnEvent(ev)
	}
}

func (g *Gate) markAsked(id string) {
	g.seenMu.Lock()
	g.seen[id] = true
	g.seenMu.Unlock()
}

func (g *Gate) asked(id string) bool {
	g.seenMu.Lock()
	defer g.seenMu.Unlock()
	return g.seen[id]
}

func action(a Ask) policy.Action {
	pa := policy.Action{Tool: a.Tool, Command: a.Command, File: a.File, URL: a.URL}
	switch a.Kind {
	case store.KindCommand:
		pa.Kind = policy.KindCommand
	case store.KindEdit:
		pa.Kind = policy.KindEdit
	case store.KindFetch:
		pa.Kind = policy.KindFetch
	default:
		pa.Kind = policy.KindTool
		if a.File != "" {
			pa.Kind = policy.KindRead
		}
	}
	return pa
}

// ranWithoutAsking records a tool call the CLI ran on its own rules (the
// native rules agentinfra gave it, or its built-in safe list).
func (g *Gate) RanWithoutAsking(nativeID string, a Ask) {
	if nativeID != "" && g.asked(nativeID) {
		return
	}
	v := g.Policy().Evaluate(action(a))
	surface, actor := store.SurfaceAgent, "agent:"+g.opts.Session.CLI
	if v.Auto {
		surface, actor = store.SurfacePolicy, store.ActorPolicy
	}
	detail, _ := json.Marshal(map[string]any{"tool": a.Tool, "command": a.Command, "file": a.File, "rule": v.Rule, "native": true})
	g.opts.Store.Record(context.Background(), store.Event{SessionID: g.opts.Session.ID, Actor: actor, Surface: surface, Action: "auto_approved", Detail: detail})
}

// decide answers one request. ctx is canceled when the CLI withdraws the
// request (or the run stops): the request is then marked withdrawn.
func (g *Gate) Decide(ctx context.Context, a Ask) Answer {
	if a.NativeID != "" {
		g.markAsked(a.NativeID)
	}
	st, ses := g.opts.Store, g.opts.Session
	pol := g.Policy()
	v := pol.Evaluate(action(a))
	if v.Auto {
		detail, _ := json.Marshal(map[string]any{"tool": a.Tool, "command": a.Command, "file": a.File, "rule": v.Rule})
		st.Record(context.Background(), store.Event{SessionID: ses.ID, Actor: store.ActorPolicy, Surface: store.SurfacePolicy, Action: "auto_approved", Detail: detail})
		g.beforeEdit(a, store.Request{SessionID: ses.ID, Kind: a.Kind, Tool: a.Tool, File: a.File, Title: a.Title, Status: store.StatusApproved})
		return Answer{Allow: true, ByPolicy: true}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if ctx.Err() != nil {
		return Answer{Message: "withdrawn"}
	}
	n := store.NewRequest{SessionID: ses.ID, NativeID: a.NativeID, Kind: a.Kind, Tool: a.Tool,
		ToolInput: a.ToolInput, Command: a.Command, File: a.File, Diff: a.Diff, URL: a.URL, Title: a.Title, Risk: v.Risk,
		Timeout: pol.Timeout("approval")}
	if prior, ok, _ := st.SessionApproval(context.Background(), ses.ID, n); ok {
		// A person approved this same action for the rest of the session.
		detail, _ := json.Marshal(map[string]any{"tool": a.Tool, "command": a.Command, "file": a.File, "scope": store.ScopeSession, "by": prior.DecidedBy, "via": prior.Surface})
		st.Record(context.Background(), store.Event{SessionID: ses.ID, RequestID: prior.ID, Actor: store.ActorAgentinfra, Surface: store.SurfaceSupervisor, Action: "auto_approved", Detail: detail})
		g.Event(runner.Event{Kind: "approval", Tool: a.Tool, Text: fmt.Sprintf("approved for this session by %s (request %d): %s", store.Handle(prior.DecidedBy), prior.ID, a.Title)})
		prior.Kind, prior.Tool, prior.File, prior.Title = a.Kind, a.Tool, a.File, a.Title
		g.beforeEdit(a, prior)
		return Answer{Allow: true, Request: prior}
	}
	req, err := st.RaiseRequest(context.Background(), n)
	if err != nil {
		// Fail closed: what cannot be asked is denied.
		return Answer{Message: "agentinfra could not record the approval request: " + err.Error()}
	}
	g.Event(runner.Event{Kind: "approval", Tool: a.Tool, Text: fmt.Sprintf("request %d: %s (risk %s): agentinfra approve %d / reject %d", req.ID, a.Title, v.Risk, req.ID, req.ID)})

	waitCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	decided := make(chan store.Request, 1)
	go func() {
		r, err := st.WaitDecision(waitCtx, req.ID)
		if err == nil {
			decided <- r
		}
	}()
	var timer <-chan time.Time
	if req.ExpiresAt != nil {
		t := time.NewTimer(time.Until(*req.ExpiresAt))
		defer t.Stop()
		timer = t.C
	}
	var r store.Request
	select {
	case r = <-decided:
	case <-timer:
		r, _, err = st.Expire(context.Background(), req.ID)
		if err != nil {
			return Answer{Message: "agentinfra could not expire the approval request: " + err.Error()}
		}
	case <-ctx.Done():
		r, _, err = st.CloseRequest(context.Background(), req.ID, store.StatusWithdrawn, store.SurfaceAgent, "the agent took the request back")
		if err != nil || r.Status == store.StatusWithdrawn {
			return Answer{Message: "withdrawn", Request: r}
		}
	}
	g.beforeEdit(a, r)
	return answerOf(r)
}

// beforeEdit runs Options.BeforeApprovedEdit for an approved edit.
func (g *Gate) beforeEdit(a Ask, r store.Request) {
	if g.opts.BeforeApprovedEdit != nil && a.Kind == store.KindEdit && r.Status == store.StatusApproved {
		g.opts.BeforeApprovedEdit(r)
	}
}

func answerOf(r store.Request) Answer {
	switch r.Status {
	case store.StatusApproved:
		return Answer{Allow: true, Request: r}
	case store.StatusRejected:
		msg := fmt.Sprintf("A person (%s, via %s) rejected this: ", store.Handle(r.DecidedBy), r.Surface)
		if r.Reason != "" {
			msg += r.Reason
		} else {
			msg += "no reason given"
		}
		return Answer{Message: msg, Reason: r.Reason, Request: r}
	case store.StatusExpired:
		return Answer{Message: "Denied: the approval request " + r.Reason + " without an answer", Request: r}
	}
	return Answer{Message: fmt.Sprintf("Denied: the approval request was %s (%s)", r.Status, r.Reason), Request: r}
}

var ErrClosed = errors.New("the run has ended")
