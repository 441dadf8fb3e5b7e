package bridge

import (
	"context"
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
	// Files are the other files of the same change (a codex patch of
	// several files): each is judged as File is.
	Files []string
	Diff  string
	URL   string
	Title string
	// Internal says why the call touches nothing but the CLI's own state
	// (a claude ToolSearch, its task list): agentinfra lets it go at once,
	// and the audit log says why. "" for everything the policy judges.
	Internal string
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
	// calls are the decisions by the tool call's native ID, until the CLI
	// says what it did with the call (outcome.go); a call not there was
	// never asked about.
	callsMu sync.Mutex
	calls   map[string]*decided
	evMu    sync.Mutex
	// prog is the session's progress line (sessions.progress); progMu
	// keeps its writes in the order of the events.
	progMu sync.Mutex
	prog   progress
	// native is the CLI's own session as recorded in the store (resume.go).
	nativeMu sync.Mutex
	native   string
}

func newGate(opts Options) *Gate { return &Gate{opts: opts, calls: map[string]*decided{}} }

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
	g.noteNative(ev)
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

func action(a Ask) policy.Action {
	pa := policy.Action{Tool: a.Tool, Command: a.Command, File: a.File, Files: a.Files, URL: a.URL}
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

// decide answers one request. ctx is canceled when the CLI withdraws the
// request (or the run stops): the request is then marked withdrawn.
func (g *Gate) Decide(ctx context.Context, a Ask) (ans Answer) {
	c := g.track(a)
	defer func() { c.settle(ans) }()
	st, ses := g.opts.Store, g.opts.Session
	if a.Internal != "" {
		g.record(store.ActorAgentinfra, store.SurfaceSupervisor, AuditPolicyAllowed, 0, a, map[string]any{"auto": true, "rule": a.Internal})
		return Answer{Allow: true, ByPolicy: true}
	}
	pol := g.Policy()
	v := pol.Evaluate(action(a))
	if v.Auto {
		g.record(store.ActorPolicy, store.SurfacePolicy, AuditPolicyAllowed, 0, a, v.Detail())
		g.beforeEdit(a, store.Request{SessionID: ses.ID, Kind: a.Kind, Tool: a.Tool, File: a.File, Title: a.Title, Status: store.StatusApproved})
		return Answer{Allow: true, ByPolicy: true}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if ctx.Err() != nil {
		return Answer{Message: "withdrawn"}
	}
	if ans, ok := g.reapplied(a); ok {
		g.beforeEdit(a, ans.Request)
		return ans
	}
	// Under the lock: a second ask that waited for the first sees the
	// approval for the session the first one got.
	if by, ok := g.forSession(ctx, pol, a); ok {
		return g.approvedForSession(a, by)
	}
	req, err := st.RaiseRequest(context.Background(), store.NewRequest{SessionID: ses.ID, NativeID: a.NativeID, Kind: a.Kind, Tool: a.Tool,
		ToolInput: a.ToolInput, Command: a.Command, File: a.File, Diff: a.Diff, URL: a.URL, Title: a.Title, Risk: v.Risk,
		Timeout: pol.Timeout("approval")})
	if err != nil {
		// Fail closed: what cannot be asked is denied — and said where a
		// person sees it (the run's output, the log of storage failures
		// beside the database), not only to the model.
		msg := "agentinfra could not record the approval request: " + err.Error()
		g.Event(runner.Event{Kind: "warning", Tool: a.Tool, Text: fmt.Sprintf("denied %s (%s) without asking: %s", a.Tool, a.Title, msg)})
		st.NoteFailure(store.Failure{What: "denied", SessionID: ses.ID, RunID: ses.RunID, TaskID: ses.TaskID,
			Text: fmt.Sprintf("%s (%s) of session %d was denied without asking a person: %s", a.Tool, a.Title, ses.ID, msg)})
		return Answer{Message: msg}
	}
	c.request(req.ID)
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
	g.delivering(r)
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
