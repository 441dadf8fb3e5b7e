package keepmoving

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision/watchdog"
)

// Options connect Run to its session.
type Options struct {
	Config Config
	// Store and Session are the run's session.
	Store   *store.Store
	Session store.Session
	// CLI and Model name the run's CLI (in the result of a run that could
	// not start).
	CLI, Model string
	// Timeout bounds the whole run (0 = none besides ctx).
	Timeout time.Duration
	// OnEvent receives the CLI's events (from one goroutine at a time).
	OnEvent func(runner.Event)
	// Bus receives the supervision events (nil: events.Default()).
	Bus *events.Bus
	// Root, RunID, Agent, TaskID label the published events.
	Root, RunID, Agent, TaskID string
	// Checkpoint takes a checkpoint before an approved edit when
	// Config.CheckpointBeforeEdit (package checkpoint's Create, bound to
	// the session's worktree); nil takes none.
	Checkpoint func(ctx context.Context, label string) error
}

// Watch is what Run sees of a run while it lasts, for its starter to wire
// into the CLI's bridge (bridge.Options' OnEvent and BeforeApprovedEdit).
type Watch struct {
	// OnEvent receives every event the CLI prints (Options.OnEvent gets it
	// from there).
	OnEvent func(runner.Event)
	// BeforeApprovedEdit runs after an edit is approved and before the CLI
	// writes it (nil: nothing to do).
	BeforeApprovedEdit func(store.Request)
}

// Starter starts the run's CLI under supervision with w in place: a
// runner.Conversation (package bridge and the CLIs' packages start one;
// keepmoving only drives it).
type Starter func(ctx context.Context, w Watch) (runner.Conversation, error)

// Outcome is how a supervised run ended.
type Outcome struct {
	// Ended: finished (the last turn ended and nobody was asked, or the
	// operator let it end), stopped (an operator's stop), error (an error
	// turn nobody answered, or the CLI failed), canceled.
	Ended string `json:"ended"`
	// TaskStatus is what the task should become: review or blocked.
	TaskStatus string `json:"task_status"`
	Reason     string `json:"reason,omitempty"`
	Turns      int    `json:"turns"`
	Prompts    int    `json:"prompts"`
	Nudges     int    `json:"nudges"`
}

// Run starts the run's CLI under supervision (start) and keeps it moving
// until it ends: after each turn the operator is asked when the config says
// so, steering is delivered, and the stall watchdog watches the CLI's
// events.
func Run(ctx context.Context, start Starter, o Options) (runner.Result, Outcome, error) {
	o.Config = withDefaults(o.Config)
	if o.Bus == nil {
		o.Bus = events.Default()
	}
	k := &keeper{o: o, st: o.Store, ses: o.Session, start: time.Now(), cli: strings.ToLower(o.CLI)}
	k.wd = watchdog.New(watchdogConfig(o.Config), (*alertActions)(k))
	var w Watch
	w.OnEvent = func(ev runner.Event) {
		k.observe(ev)
		if o.OnEvent != nil {
			o.OnEvent(ev)
		}
	}
	if o.Config.CheckpointBeforeEdit && o.Checkpoint != nil {
		w.BeforeApprovedEdit = func(r store.Request) {
			label := fmt.Sprintf("before request %d: %s", r.ID, r.Title)
			if r.ID == 0 { // the policy approved it: no request
				label = fmt.Sprintf("before an edit the policy approved: %s", r.Title)
			}
			if err := o.Checkpoint(context.Background(), label); err != nil {
				k.st.Record(context.Background(), store.Event{SessionID: k.ses.ID, RequestID: r.ID, Actor: store.ActorAgentinfra, Surface: store.SurfaceSupervisor,
					Action: "checkpoint_failed", Detail: mustJSON(map[string]any{"error": err.Error()})})
			}
		}
	}
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	b, err := start(ctx, w)
	if err != nil {
		return runner.Result{CLI: o.CLI, Model: o.Model, ExitCode: -1, Error: err.Error()}, Outcome{Ended: "error", TaskStatus: "blocked", Reason: err.Error()},
			fmt.Errorf("%w: %w", runner.ErrAgentFailed, err)
	}
	k.b = b
	k.turnStarted()
	out := k.loop(ctx)
	b.Close()
	res, err := b.Wait()
	out.Turns, out.Nudges = k.turns, k.nudges
	if ses, serr := k.st.Session(context.WithoutCancel(ctx), k.ses.ID); serr == nil && ses.StoppedByPerson() {
		// A person stopped the session: that is how the run ended,
		// whatever the CLI, ended by the stop, printed or failed to.
		out.Ended, out.TaskStatus, out.Reason = "stopped", "blocked", ses.StopText()
		res.Stopped, res.StoppedBy, res.Error = ses.StopText(), ses.EndedBy, ""
		return res, out, nil
	}
	if err != nil && (out.Ended == "finished" || out.Reason == reasonCLIExited) {
		out.Ended, out.TaskStatus, out.Reason = "error", "blocked", err.Error()
	}
	return res, out, err
}

type keeper struct {
	o     Options
	st    *store.Store
	ses   store.Session
	b     runner.Conversation
	wd    *watchdog.Watchdog
	cli   string
	start time.Time

	mu        sync.Mutex
	turns     int
	tokens    int64 // the run's tokens so far (result events)
	nudges    int
	lastMsg   string
	turnErr   string
	toolHolds map[string]func() // a tool running silently, by tool name
	apprHold  func()
	turnHold  func() // the turn is over: nothing is expected of the agent
	inTurn    bool
}

func (k *keeper) publish(kind events.Kind, id int64, status, text string) {
	k.o.Bus.Publish(events.Event{Kind: kind, Root: k.o.Root, RunID: k.o.RunID, Agent: k.o.Agent, TaskID: k.o.TaskID,
		SessionID: k.ses.ID, ItemID: id, Status: status, Text: text, Actor: store.ActorWatchdog})
}

// observe feeds the watchdog with the CLI's events.
func (k *keeper) observe(ev runner.Event) {
	k.wd.Activity()
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.toolHolds == nil {
		k.toolHolds = map[string]func(){}
	}
	switch ev.Kind {
	case "message":
		if strings.TrimSpace(ev.Text) != "" {
			k.lastMsg = ev.Text
		}
	case "error":
		k.turnErr = ev.Text
	case "tool_use":
		// claude and gemini print nothing while a shell command runs.
		key := fmt.Sprintf("%s#%d", ev.Tool, len(k.toolHolds))
		k.toolHolds[key] = k.wd.Hold("tool " + ev.Tool + " running")
	case "tool_result":
		for key, release := range k.toolHolds { // results come in order
			release()
			delete(k.toolHolds, key)
			break
		}
	case "approval":
		if k.apprHold == nil {
			k.apprHold = k.wd.Hold("approval request pending")
		}
	case "result":
		k.tokens = max(k.tokens, ev.Tokens)
		for key, release := range k.toolHolds {
			release()
			delete(k.toolHolds, key)
		}
		if strings.Contains(ev.Text, "is_error") || ev.Text == "failed" {
			k.turnErr = ev.Text
		}
	}
}

// turnStarted: the agent works; the watchdog's clock runs.
func (k *keeper) turnStarted() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.turnHold != nil {
		k.turnHold()
		k.turnHold = nil
	}
	k.inTurn = true
	k.lastMsg, k.turnErr = "", ""
	k.wd.Activity()
}

func (k *keeper) turnEnded() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.turns++
	k.inTurn = false
	if k.turnHold == nil {
		k.turnHold = k.wd.Hold("the turn is over")
	}
}

func (k *keeper) send(ctx context.Context, text string) error {
	k.turnStarted()
	return k.b.Send(ctx, text)
}

// kindOf says what to ask after a turn ("" = nothing: the run ends).
func (k *keeper) kindOf(ev runner.Event) (kind, text string) {
	k.mu.Lock()
	msg, turnErr, turns, tokens := k.lastMsg, k.turnErr, k.turns, k.tokens
	k.mu.Unlock()
	if ev.Kind == "error" && turnErr == "" {
		turnErr = ev.Text
	}
	c := k.o.Config
	switch {
	case c.Prompts.Ask == AskNever:
		return "", ""
	case turnErr != "":
		return store.PromptErrorRecovery, "The turn ended on an error: " + turnErr
	case asksAQuestion(msg):
		return store.PromptClarification, msg
	}
	if w := k.budgetWarning(turns, tokens); w != "" {
		return store.PromptResourceWarning, w
	}
	if c.Prompts.Ask == AskAlways {
		return store.PromptContinuation, msg
	}
	return "", ""
}

// asksAQuestion: the agent's last message ends with a question.
func asksAQuestion(msg string) bool {
	msg = strings.TrimRight(strings.TrimSpace(msg), "*_`\"')")
	return strings.HasSuffix(msg, "?")
}

func (k *keeper) budgetWarning(turns int, tokens int64) string {
	b := k.o.Config.Budget
	if b.MaxTurns > 0 && float64(turns) >= WarnAt*float64(b.MaxTurns) {
		return fmt.Sprintf("%d of the %d turns of the budget are used", turns, b.MaxTurns)
	}
	if b.MaxTokens > 0 && float64(tokens) >= WarnAt*float64(b.MaxTokens) {
		return fmt.Sprintf("%d of the %d tokens of the budget are used", tokens, b.MaxTokens)
	}
	if d := time.Duration(b.MaxDuration); d > 0 && float64(time.Since(k.start)) >= WarnAt*float64(d) {
		return fmt.Sprintf("%v of the %v of the budget are used", time.Since(k.start).Round(time.Second), d)
	}
	return ""
}

// loop runs turns until the run ends.
func (k *keeper) loop(ctx context.Context) Outcome {
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wdDone := make(chan error, 1)
	go func() { wdDone <- k.wd.Run(lctx) }()
	steered := make(chan struct{}, 1)
	go k.follow(lctx, steered)
	procDone := k.procDone(lctx)
	exited := cliExited(k.b)
	var prompts int
	for {
		select {
		case <-ctx.Done():
			k.b.Interrupt(context.Background())
			return Outcome{Ended: "canceled", TaskStatus: "blocked", Reason: ctx.Err().Error(), Prompts: prompts}
		case <-procDone:
			return Outcome{Ended: "finished", TaskStatus: "review", Prompts: prompts}
		case <-exited:
			// The CLI ended by itself (each keeps running until its input
			// is closed): it crashed, or its bridge stopped it on a message
			// it did not understand. Waiting for a turn to end would wait
			// forever; the CLI's result (Run's Wait) says why.
			select {
			case <-k.b.TurnEnded():
				return Outcome{Ended: "finished", TaskStatus: "review", Prompts: prompts}
			default:
			}
			return Outcome{Ended: "error", TaskStatus: "blocked", Reason: reasonCLIExited, Prompts: prompts}
		case err := <-wdDone:
			if err != nil {
				k.st.Record(context.Background(), store.Event{SessionID: k.ses.ID, Actor: store.ActorWatchdog, Surface: store.SurfaceSupervisor,
					Action: "watchdog_failed", Detail: mustJSON(map[string]any{"error": err.Error()})})
			}
			wdDone = nil
		case <-steered:
			// a steering message started a turn; nothing else to do
		case ev := <-k.b.TurnEnded():
			k.turnEnded()
			kind, text := k.kindOf(ev)
			if kind == "" {
				if k.queuedSteering(lctx) {
					continue // a message waits: it is the next turn
				}
				return Outcome{Ended: "finished", TaskStatus: "review", Prompts: prompts}
			}
			prompts++
			out, ok := k.ask(lctx, kind, text, steered)
			if !ok {
				continue
			}
			out.Prompts = prompts
			return out
		}
	}
}

// ask raises a prompt and acts on its answer. ok false: the run goes on.
func (k *keeper) ask(ctx context.Context, kind, text string, steered <-chan struct{}) (Outcome, bool) {
	c := k.o.Config
	p, err := k.st.RaisePrompt(ctx, store.NewPrompt{SessionID: k.ses.ID, Kind: kind, Text: text, Timeout: time.Duration(c.Prompts.Timeout)})
	if err != nil {
		return Outcome{Ended: "error", TaskStatus: "blocked", Reason: "could not ask the operator: " + err.Error()}, true
	}
	k.publish(events.PromptChanged, p.ID, p.Status, kind+": "+text)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	decided := make(chan store.Prompt, 1)
	go func() {
		if got, err := k.st.WaitPrompt(wctx, p.ID); err == nil {
			decided <- got
		}
	}()
	var timer <-chan time.Time
	if p.ExpiresAt != nil {
		t := time.NewTimer(time.Until(*p.ExpiresAt))
		defer t.Stop()
		timer = t.C
	}
	select {
	case p = <-decided:
	case <-timer:
		p, _, err = k.st.TimeoutPrompt(context.Background(), p.ID)
		if err != nil {
			return Outcome{Ended: "error", TaskStatus: "blocked", Reason: err.Error()}, true
		}
	case <-steered:
		// A person's message went to the agent: it is the answer.
		p, _, _ = k.st.WithdrawPrompt(context.Background(), p.ID, "a steering message started the next turn")
		k.publish(events.PromptChanged, p.ID, p.Status, p.Reason)
		return Outcome{}, false
	case <-ctx.Done():
		return Outcome{Ended: "canceled", TaskStatus: "blocked", Reason: ctx.Err().Error()}, true
	}
	k.publish(events.PromptChanged, p.ID, p.Status, p.Instruction)
	switch p.Status {
	case store.PromptContinued:
		if err := k.send(ctx, c.Prompts.Continue); err != nil {
			return Outcome{Ended: "error", TaskStatus: "blocked", Reason: err.Error()}, true
		}
		return Outcome{}, false
	case store.PromptRefined:
		if err := k.send(ctx, p.Instruction); err != nil {
			return Outcome{Ended: "error", TaskStatus: "blocked", Reason: err.Error()}, true
		}
		return Outcome{}, false
	case store.PromptStopped:
		return Outcome{Ended: "stopped", TaskStatus: c.Prompts.StopStatus, Reason: fmt.Sprintf("stopped by %s via %s at prompt p%d", store.Handle(p.DecidedBy), p.Surface, p.ID)}, true
	case store.PromptExpired:
		return Outcome{Ended: "error", TaskStatus: "blocked", Reason: fmt.Sprintf("prompt p%d (%s) %s", p.ID, p.Kind, p.Reason)}, true
	}
	// withdrawn: the session ended
	return Outcome{Ended: "stopped", TaskStatus: c.Prompts.StopStatus, Reason: p.Reason}, true
}

// reasonCLIExited is the outcome of a run whose CLI ended before its turn
// did, until the CLI's result says why.
const reasonCLIExited = "the agent CLI exited before its turn ended"

// cliExited is closed when b's CLI process has ended (nil, never, for a
// conversation that does not say its process).
func cliExited(b runner.Conversation) <-chan struct{} {
	if p, ok := b.(interface{ Process() *runner.Interactive }); ok && p.Process() != nil {
		return p.Process().Done()
	}
	return nil
}

func (k *keeper) procDone(ctx context.Context) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		changes, err := k.st.Changes(ctx)
		if err != nil {
			return
		}
		for range changes {
			if ses, err := k.st.Session(ctx, k.ses.ID); err == nil && ses.Ended() {
				return
			}
		}
		<-ctx.Done()
	}()
	return ch
}

func (k *keeper) queuedSteering(ctx context.Context) bool {
	q, err := k.st.QueuedSteering(ctx, k.ses.ID)
	return err == nil && len(q) > 0
}

// follow applies what others change in the store: queued steering is
// delivered (claimed once), the watchdog's pause by a person holds its
// clock, an alert a person closed restarts it, an approval decided
// releases the approval hold.
func (k *keeper) follow(ctx context.Context, steered chan<- struct{}) {
	changes, err := k.st.Changes(ctx)
	if err != nil {
		return
	}
	var pauseHold func()
	tick := func() {
		if paused, err := k.st.WatchdogPaused(ctx, k.ses.ID); err == nil {
			switch {
			case paused && pauseHold == nil:
				pauseHold = k.wd.Hold("paused by a person")
			case !paused && pauseHold != nil:
				pauseHold()
				pauseHold = nil
			}
		}
		if st := k.wd.State(); st.AlertID != 0 {
			if a, err := k.st.Alert(ctx, st.AlertID); err == nil && !a.Active() {
				k.wd.Closed(a.ID)
			}
		}
		k.mu.Lock()
		hold := k.apprHold
		k.mu.Unlock()
		if hold != nil {
			if rs, err := k.st.Pending(ctx); err == nil && !pendingFor(rs, k.ses.ID) {
				k.mu.Lock()
				k.apprHold = nil
				k.mu.Unlock()
				hold()
			}
		}
		q, err := k.st.QueuedSteering(ctx, k.ses.ID)
		if err != nil {
			return
		}
		for _, m := range q {
			won, err := k.st.ClaimSteering(ctx, m.ID)
			if err != nil || !won {
				continue
			}
			if err := k.send(ctx, m.Text); err != nil {
				k.st.DropSteering(context.Background(), m.ID, err.Error())
				k.publish(events.SteeringChanged, m.ID, store.SteeringDropped, err.Error())
				continue
			}
			k.publish(events.SteeringChanged, m.ID, store.SteeringDelivered, m.Text)
			select {
			case steered <- struct{}{}:
			default:
			}
		}
	}
	tick()
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-changes:
			if !ok {
				return
			}
			tick()
		}
	}
}

func pendingFor(rs []store.PendingView, id int64) bool {
	for _, r := range rs {
		if r.SessionID == id {
			return true
		}
	}
	return false
}

// alertActions are the watchdog's actions on this session.
type alertActions keeper

func (a *alertActions) k() *keeper { return (*keeper)(a) }

func (a *alertActions) Raise(ctx context.Context, silent time.Duration) (int64, error) {
	k := a.k()
	al, err := k.st.RaiseAlert(ctx, k.ses.ID, fmt.Sprintf("no activity for %v", silent.Round(time.Second)))
	if err != nil {
		if errors.Is(err, store.ErrPendingExists) || errors.Is(err, store.ErrBadTransition) {
			return 0, watchdog.ErrAlertClosed
		}
		return 0, err
	}
	k.publish(events.AlertChanged, al.ID, al.Status, al.Reason)
	return al.ID, nil
}

func (a *alertActions) Nudge(ctx context.Context, id int64, n int, text string) error {
	k := a.k()
	al, err := k.st.DecideAlert(ctx, store.AlertDecision{ID: id, Action: store.AlertNudge, By: store.ActorWatchdog, Text: text,
		Reason: fmt.Sprintf("nudge %d of %d", n, k.wd.Config().MaxRetries)})
	var de *store.DecidedError
	if errors.As(err, &de) {
		return watchdog.ErrAlertClosed
	}
	if err != nil {
		return err
	}
	k.mu.Lock()
	k.nudges++
	k.mu.Unlock()
	if err := k.nudge(ctx, text); err != nil {
		return err
	}
	k.publish(events.AlertChanged, al.ID, al.Status, text)
	return nil
}

// nudge delivers text to an agent that is silent mid-turn: claude takes a
// user line at any time, codex a turn/steer; gemini's protocol has no way
// to add to a running turn (a prompt is queued until the turn ends, which
// a stalled turn never does), so the stalled turn is canceled and the nudge
// runs as the next prompt.
func (k *keeper) nudge(ctx context.Context, text string) error {
	k.mu.Lock()
	inTurn := k.inTurn
	k.mu.Unlock()
	if !inTurn {
		return k.send(ctx, text)
	}
	if err := k.b.Send(ctx, text); err != nil {
		return err
	}
	if k.cli == runner.CLIGemini {
		return k.b.Interrupt(ctx)
	}
	return nil
}

func (a *alertActions) Escalate(ctx context.Context, id int64, nudges int) error {
	k := a.k()
	reason := fmt.Sprintf("still silent after %d nudge(s): %s, please look at session %d", nudges, store.Handle(k.ses.Owner), k.ses.ID)
	al, won, err := k.st.CloseAlert(ctx, id, store.AlertEscalated, reason)
	if err != nil {
		return err
	}
	if !won {
		return watchdog.ErrAlertClosed
	}
	// The mention: the remote surfaces (Slack) post Text, which names the owner.
	k.publish(events.AlertChanged, al.ID, al.Status, reason)
	return nil
}

func (a *alertActions) Recover(ctx context.Context, id int64) error {
	k := a.k()
	if id == 0 {
		return nil
	}
	al, won, err := k.st.CloseAlert(ctx, id, store.AlertSelfRecovered, "the agent is active again")
	if err != nil {
		return err
	}
	if won {
		k.publish(events.AlertChanged, al.ID, al.Status, al.Reason)
	}
	return nil
}
