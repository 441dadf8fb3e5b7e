// Package runner is what the headless runs of every agent CLI share. Each
// CLI's package in agentcli has a Runner that builds its argv from a Request
// (long prompts go through stdin) and parses its JSON stream into live
// Events and a Result; Exec and ExecCommand start the CLI from an argv in its
// own process group, stream its output through bounded capture windows, kill
// the whole group on timeout or cancellation, and redact secrets from
// everything they return.
//
// runner knows nothing of the task matrix, prompts or workspaces: package
// dispatch decides what to run and records the outcome.
package runner

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/internal/mdtext"
)

// CLI names of the agent runners.
const (
	CLIGemini = "gemini"
	CLIClaude = "claude"
	CLICodex  = "codex"
)

// CLIs lists the supported agent CLIs; the first is the default.
var CLIs = []string{CLIGemini, CLIClaude, CLICodex}

// Approval modes (gemini's names; the other runners map them).
const (
	ApprovalDefault  = "default"
	ApprovalAutoEdit = "auto_edit"
	ApprovalYolo     = "yolo"
	// ApprovalAsk is a supervised run: the CLI runs through its bridge
	// (package bridge) and every permission request the workspace policy
	// does not allow waits for a person. Its headless command (what a dry
	// run shows) is the default mode's.
	ApprovalAsk = "ask"
)

// ApprovalModes lists the accepted --approval-mode values.
var ApprovalModes = []string{ApprovalDefault, ApprovalAutoEdit, ApprovalYolo, ApprovalAsk}

// argPromptLimit is the largest prompt passed as an argv element. Linux refuses
// a single argument longer than 128 KiB (MAX_ARG_STRLEN) with E2BIG, so longer
// prompts go through the child's standard input instead.
const ArgPromptLimit = 100 * 1024

// Request is one headless run of an agent CLI.
type Request struct {
	// Prompt is the user prompt (the assembled task prompt).
	Prompt string
	// SystemPrompt is the agent's role ("" for none), given to the CLI as
	// system instructions, never as part of Prompt: claude appends it to its
	// own system prompt (--append-system-prompt-file), codex adds it as
	// developer instructions after its own (-c developer_instructions=...),
	// and gemini, which has no way to add to its system prompt, uses it
	// instead of its own (GEMINI_SYSTEM_MD).
	SystemPrompt string
	// SystemPromptFile holds SystemPrompt for the CLIs that read it from a
	// file (gemini, claude). Exec writes a private temporary file (0600) when
	// it is unset and removes it after the run.
	SystemPromptFile string
	Model            string
	// Session continues an earlier session of the same CLI ("" starts a new one).
	Session string
	// ApprovalMode is default|auto_edit|yolo ("" means default).
	ApprovalMode string
	// Dir is the working directory of the agent ("" = the current one).
	Dir string
	// Env holds KEY=VALUE additions and overrides on top of the inherited
	// environment (or on top of nothing when CleanEnv is set).
	Env      []string
	CleanEnv bool
	// Binary overrides the executable (default: the CLI's name looked up in
	// $AGENTINFRA_TOOLS/node_modules/.bin, then $PATH).
	Binary string
	// ExtraArgs are appended before the prompt (e.g. codex -c overrides).
	ExtraArgs []string
	// Wrap runs the CLI under another program: Wrap[0] is executed with
	// Wrap[1:], then the CLI's path and arguments (e.g. a sandbox, or strace
	// in the tests). Records still show the CLI's own argv.
	Wrap []string
	// Timeout bounds the run (0 = none besides ctx).
	Timeout time.Duration
	// KillGrace is how long the process group gets between SIGTERM and SIGKILL
	// (0 = 5s).
	KillGrace time.Duration
}

// Command is how a runner wants to be started.
type Command struct {
	Argv []string
	// Env holds the KEY=VALUE entries the runner adds (on top of Request.Env).
	Env []string
	// Stdin is fed to the child when the prompt is too long for argv.
	Stdin string
	// PromptArg is the index of the argv element holding the prompt (-1 if none),
	// so records can show a placeholder instead of repeating the prompt.
	PromptArg int
}

// Event is one live progress item parsed from the CLI's JSON stream.
type Event struct {
	// Kind: init, message, tool_use, tool_result, error, warning, result.
	Kind      string `json:"kind"`
	Text      string `json:"text,omitempty"`
	Tool      string `json:"tool,omitempty"`
	SessionID string `json:"session_id,omitempty"`
	// Tokens, on a result event, is what the run has used so far (input
	// and output tokens, as the CLI reports them; 0 when it does not): a
	// supervised run's token budget reads it.
	Tokens int64 `json:"tokens,omitempty"`
}

// String renders the event as one short line for a terminal.
func (e Event) String() string {
	s := e.Kind
	if e.Tool != "" {
		s += " " + e.Tool
	}
	if e.Text != "" {
		s += ": " + mdtext.Shorten(e.Text, 160)
	}
	return s
}

// Result is the parsed outcome of a run.
type Result struct {
	CLI          string `json:"cli"`
	Model        string `json:"model"`
	SessionID    string `json:"session_id"`
	Response     string `json:"response"`
	InputTokens  int64  `json:"input_tokens"`
	OutputTokens int64  `json:"output_tokens"`
	ToolCalls    int    `json:"tool_calls"`
	DurationMS   int64  `json:"duration_ms"`
	ExitCode     int    `json:"exit_code"`
	// Error is "" on success, else a one-paragraph reason.
	Error    string `json:"error"`
	Canceled bool   `json:"canceled"`
	TimedOut bool   `json:"timed_out"`
	// Stopped says who stopped a supervised run, how and why ("session
	// stopped by @ana via terminal: no longer needed"); StoppedBy is that
	// person. "" when nobody did.
	Stopped    string `json:"stopped,omitempty"`
	StoppedBy  string `json:"stopped_by,omitempty"`
	StderrTail string `json:"stderr_tail"`
	// Argv is the command line that ran, secrets redacted, the prompt replaced by
	// a placeholder.
	Argv []string `json:"argv"`
	// StdoutBytes/StderrBytes count all output, including what was not kept.
	StdoutBytes int64 `json:"stdout_bytes"`
	StderrBytes int64 `json:"stderr_bytes"`
}

// OK reports whether the run succeeded.
func (r Result) OK() bool { return r.Error == "" && !r.Canceled && !r.TimedOut && r.Stopped == "" }

// Parser consumes one run's output. Line is called for each stdout line, in
// order, one call at a time (and Flush, when the parser has it, between
// them); Finish once after the process ended.
type Parser interface {
	Line(line []byte) []Event
	// Finish completes the result from what was seen. stdout is the captured
	// stdout (possibly head/tail only), stderr the captured stderr tail.
	Finish(res *Result, stdout, stderr []byte)
}

// Flusher is a Parser that holds back what a CLI streams in small pieces
// (gemini's assistant text deltas) to report it as one event. Flush
// reports what it holds (nothing: nil). The runner calls it once the
// output has been quiet for FlushAfter, and at the end of the output (the
// CLI's exit, or its stop), so held text reaches the log within a second
// and is never lost.
type Flusher interface {
	Flush() []Event
}

// FlushAfter is the quiet interval after which a Flusher's held text is
// reported: short enough to read as live, long enough that a stream of
// deltas makes one event, not one per word.
const FlushAfter = 300 * time.Millisecond

// Runner knows one agent CLI: how to invoke it and how to read its output.
type Runner interface {
	Name() string
	Command(req Request) (Command, error)
	NewParser(req Request) Parser
}

// Parse runs a whole captured output through a runner's parser (for tests and
// for re-reading recorded output).
func Parse(r Runner, req Request, stdout, stderr []byte, exitCode int) Result {
	p := r.NewParser(req)
	for line := range strings.Lines(string(stdout)) {
		p.Line([]byte(strings.TrimRight(line, "\r\n")))
	}
	res := Result{CLI: r.Name(), Model: req.Model, ExitCode: exitCode}
	p.Finish(&res, stdout, stderr)
	return res
}

// CheckArgs refuses a model or session that the agent CLI could read as an
// option of its own: one that starts with "-" (through MCP, an agent could
// otherwise pass --model --dangerously-skip-permissions and switch another
// agent's safety off), or holds a control character or white space. Every
// runner's Command calls it.
func CheckArgs(model, session string) error {
	for _, a := range []struct{ name, v string }{{"model", model}, {"session", session}} {
		switch {
		case strings.HasPrefix(a.v, "-"):
			return &agenterr.Error{Kind: agenterr.Invalid, Field: a.name, Value: a.v, Reason: `it cannot start with "-", which the agent CLI would read as an option`}
		case strings.IndexFunc(a.v, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0:
			return &agenterr.Error{Kind: agenterr.Invalid, Field: a.name, Value: a.v, Reason: "it cannot hold white space or control characters"}
		}
	}
	return nil
}

// CheckApproval refuses an unknown approval mode ("" is the default).
func CheckApproval(mode string) error {
	if mode == "" || slices.Contains(ApprovalModes, mode) {
		return nil
	}
	return &agenterr.Error{Kind: agenterr.Invalid, Field: "approval_mode", Value: mode, Valid: ApprovalModes, Reason: "unknown approval mode"}
}

// OutputShape describes output a parser could not use, for an error
// message.
func OutputShape(stdout []byte) string {
	s := bytes.TrimSpace(stdout)
	if len(s) == 0 {
		return "stdout was empty"
	}
	return fmt.Sprintf("stdout (%d bytes) held no JSON result; it begins %q", len(stdout), mdtext.Shorten(string(s), 120))
}
