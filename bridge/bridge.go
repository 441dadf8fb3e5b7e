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
	"path/filepath"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/contain"
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
	// Resume is the CLI's own session to continue (a resumed run: claude
	// --resume, codex thread/resume, gemini session/load); "" starts a new
	// one. Prompt is then the message that tells the agent it was resumed.
	Resume string
	// PromptIfNew is the prompt of a resumed run whose session the CLI
	// cannot load (no session to resume, or a gemini that does not offer
	// loadSession): the task's prompt, and what was done before.
	PromptIfNew string
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

// Files is a run's own folder (contain.RunDir): the files a bridge gives
// its CLI to read — the system prompt, gemini's policy, codex's hook
// socket — where the agent cannot rewrite them, unlike /tmp.
type Files struct {
	Dir string
	// Warning says, once, that the folder is one the agent may write after
	// all ("" when it is not).
	Warning string
	remove  func()
}

// NewFiles makes the run's own folder for req.
func NewFiles(req Request) (*Files, error) {
	dir, warning, remove, err := contain.RunDir(req.Dir, req.Env, req.CleanEnv)
	if err != nil {
		return nil, err
	}
	return &Files{Dir: dir, Warning: warning, remove: remove}, nil
}

// Write writes a file of the folder (readable by its owner only) and
// returns its path.
func (f *Files) Write(name, content string) (string, error) {
	path := filepath.Join(f.Dir, name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		return "", fmt.Errorf("write %s for the agent CLI: %w", name, err)
	}
	return path, nil
}

// Remove deletes the folder (the run has ended).
func (f *Files) Remove() { f.remove() }

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
