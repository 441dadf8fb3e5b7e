// Package bridge is what the supervised runs of every agent CLI share: a
// CLI runs over its own permission protocol (each CLI's package in agentcli
// holds its bridge, a Starter), every permission request it makes goes
// through the Gate — the workspace policy and, when the policy does not
// approve it, an approval request in the store that a person decides from
// any surface (another process); the decision goes back to the CLI, a deny
// with its reason where the protocol carries one. agentinfra applies the
// timeout (the CLIs have none): an expired request is denied with "timed
// out after …". A request the CLI takes back is marked withdrawn. The
// CLI's events go to a callback in the shape of runner.Event, Send /
// Interrupt steer a live run, and the run follows its session (paused,
// resumed, stopped from any process).
//
// Start gives the live Bridge (package keepmoving drives it: the watchdog,
// prompts, steering); Run is one supervised turn.
package bridge

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision/policy"
)

// Request is one supervised run of an agent CLI.
type Request struct {
	CLI          string // gemini, claude or codex
	Prompt       string
	SystemPrompt string
	// SystemPromptFile holds SystemPrompt when the caller keeps it in a
	// file of its own (a fleet run's runs/{run}.system.md): a CLI that
	// reads the system prompt from a file is given that one, never a
	// temporary file.
	SystemPromptFile string
	Model            string
	Dir              string // the agent's working directory (the session's workspace)
	Env              []string
	CleanEnv         bool
	// Binary overrides the executable (default: the CLI looked up like runner does).
	Binary string
	// ExtraArgs are appended to the CLI's arguments (e.g. codex -c overrides).
	ExtraArgs []string
	// Timeout bounds the whole run (0 = none besides ctx).
	Timeout time.Duration
}

// Options connect a run to its session.
type Options struct {
	Store   *store.Store
	Session store.Session
	// Policy returns the policy in force (policy.Live.Current); nil asks a
	// person for everything.
	Policy func() *policy.Policy
	// OnEvent receives the CLI's events (from one goroutine at a time).
	OnEvent func(runner.Event)
	// KillGrace is the time between SIGTERM and SIGKILL at the end (0 = 5 s).
	KillGrace time.Duration
	// BeforeApprovedEdit, when set, runs after an edit is approved (by a
	// person or the policy) and before the CLI is told: issue 22's
	// checkpoint before each approved edit. The request of a policy
	// approval has no ID.
	BeforeApprovedEdit func(store.Request)
}

// Bridge is a live supervised run: a runner.Conversation whose Send
// delivers the next user message (claude takes it at any time; codex steers
// the running turn or starts a new one; gemini only between turns, so
// mid-turn it is queued until the turn ends) and whose Interrupt withdraws
// a pending request.
type Bridge = runner.Conversation

// Started is a CLI's live bridge as its Starter returns it: the Bridge,
// the CLI's process (stopped and continued with the session) and a stop
// (the session ended).
type Started interface {
	Bridge
	Process() *runner.Interactive
	Stop()
}

// Starter starts one agent CLI under supervision over its own permission
// protocol, each permission request going to g. Every CLI's package has one
// (agentcli/claude, agentcli/codex, agentcli/gemini); package agentcli
// picks it by name.
type Starter func(ctx context.Context, req Request, g *Gate) (Started, error)

// Start starts req's CLI with start under supervision, and follows the
// session: paused, resumed and stopped from any process.
func Start(ctx context.Context, start Starter, req Request, opts Options) (Bridge, error) {
	if opts.Store == nil || opts.Session.ID == 0 {
		return nil, fmt.Errorf("a supervised run needs the store and its session")
	}
	b, err := start(ctx, req, newGate(opts))
	if err != nil {
		return nil, err
	}
	followSession(opts.Store, opts.Session.ID, b)
	return b, nil
}

// Run is one supervised turn: start the CLI with the prompt, wait for the
// turn to end, close the conversation and return the result. It is the
// exec step of a supervised dispatch or fleet run.
func Run(ctx context.Context, start Starter, req Request, opts Options) (runner.Result, error) {
	if req.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, req.Timeout)
		defer cancel()
	}
	b, err := Start(ctx, start, req, opts)
	if err != nil {
		return runner.Result{CLI: req.CLI, Model: req.Model, ExitCode: -1, Error: err.Error()}, fmt.Errorf("%w: %w", runner.ErrAgentFailed, err)
	}
	select {
	case <-b.TurnEnded():
	case <-b.(Started).Process().Done(): // stopped (session stop) or crashed
	case <-ctx.Done():
		b.Interrupt(context.Background())
	}
	b.Close()
	return b.Wait()
}

// binary is the executable of a CLI.
func Binary(req Request, name string) (string, error) {
	if req.Binary != "" {
		return req.Binary, nil
	}
	return runner.LookupCLI(name)
}

// systemPromptFile writes the system prompt to a private file ("" for none).
func SystemPromptFile(req Request) (string, func(), error) {
	text := req.SystemPrompt
	if req.SystemPromptFile != "" {
		return req.SystemPromptFile, func() {}, nil // the caller's, kept with its run
	}
	if text == "" {
		return "", func() {}, nil
	}
	f, err := os.CreateTemp("", "agentinfra-system-*.md")
	if err != nil {
		return "", nil, err
	}
	f.WriteString(text)
	f.Close()
	return f.Name(), func() { os.Remove(f.Name()) }, nil
}

// finish fills the common parts of a result.
func Finish(res *runner.Result, start time.Time, p *runner.Interactive, stopped bool) error {
	code, tail, werr := p.Wait()
	res.DurationMS = time.Since(start).Milliseconds()
	res.ExitCode = code
	res.StderrTail = tail
	res.Argv = runner.RedactArgv(p.Cmd.Args, -1)
	switch {
	case res.Error != "":
	case werr != nil:
		res.Error = werr.Error()
	case code != 0 && !stopped:
		res.Error = fmt.Sprintf("%s exited with code %d", res.CLI, code)
	}
	// The CLI's own words say why, more often than its exit code.
	res.Error = runner.Said(res.CLI, res.Error, tail, p.Cmd.Env)
	if res.Error != "" {
		return fmt.Errorf("%w: %s", runner.ErrAgentFailed, res.Error)
	}
	return nil
}

// StderrExcerpt is the end of what a CLI printed on stderr, for an error
// saying why it could not start ("" when it printed nothing).
func StderrExcerpt(tail string) string {
	tail = strings.TrimSpace(tail)
	if tail == "" {
		return ""
	}
	if len(tail) > 600 {
		tail = tail[len(tail)-600:]
	}
	return "\nstderr: " + tail
}
