package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"time"
	"unicode/utf8"
)

// Errors a run can end with (test with errors.Is).
var (
	ErrCanceled    = errors.New("canceled")
	ErrTimedOut    = errors.New("timed out")
	ErrAgentFailed = errors.New("agent run failed")
)

// Output limits: what a run may cost in memory however much the child prints.
const (
	stdoutHead    = 1 << 20  // first 1 MiB of stdout kept
	stdoutTail    = 1 << 20  // last 1 MiB of stdout kept
	stderrHead    = 16 << 10 // first 16 KiB of stderr kept
	stderrTail    = 64 << 10 // last 64 KiB of stderr kept
	maxLine       = 8 << 20  // a longer stdout line is cut (and cannot parse)
	stderrTailOut = 4 << 10  // Result.StderrTail size
	MaxResponse   = 4 << 20  // Result.Response is cut beyond this
	MaxEventText  = 2000     // Event.Text is cut beyond this (tool inputs can be whole files)
	defaultGrace  = 5 * time.Second
	// pipeDrain bounds the wait for EOF once the process group is gone: a
	// grandchild that escaped the group (setsid) may still hold the pipes.
	pipeDrain = 2 * time.Second
)

// StderrTailMax is the longest Result.StderrTail.
const StderrTailMax = stderrTailOut

// Exec runs one agent CLI headless and returns the parsed result: it writes
// req.SystemPrompt to a private temporary file when the runner reads it from
// one (removed when the run ends), builds the command (r.Command) and runs it
// (ExecCommand).
func Exec(ctx context.Context, r Runner, req Request, onEvent func(Event)) (Result, error) {
	req, c, cleanup, err := Prepare(r, req)
	if err != nil {
		return Failed(r, req, err)
	}
	defer cleanup()
	return ExecCommand(ctx, r, req, c, onEvent)
}

// Prepare is what Exec does before ExecCommand: it writes req.SystemPrompt
// to a private temporary file when the runner reads it from one, and builds
// the command. cleanup removes the file (call it when the run ended).
func Prepare(r Runner, req Request) (Request, Command, func(), error) {
	cleanup := func() {}
	if f, ok := r.(SystemPromptFileReader); ok && f.ReadsSystemPromptFile() && req.SystemPrompt != "" && req.SystemPromptFile == "" {
		path, err := writeSystemPromptFile(req.SystemPrompt)
		if err != nil {
			return req, Command{}, cleanup, err
		}
		cleanup = func() { os.Remove(path) }
		req.SystemPromptFile = path
	}
	c, err := r.Command(req)
	if err != nil {
		cleanup()
		return req, Command{}, func() {}, err
	}
	return req, c, cleanup, nil
}

// SystemPromptFileReader is a runner whose CLI can read the system prompt
// from a file (Request.SystemPromptFile): Prepare writes one for it.
type SystemPromptFileReader interface{ ReadsSystemPromptFile() bool }

// writeSystemPromptFile writes text to a new temporary file that only its
// owner can read (os.CreateTemp makes it 0600) and returns its path.
func writeSystemPromptFile(text string) (string, error) {
	f, err := os.CreateTemp("", "agentinfra-system-*.md")
	if err != nil {
		return "", fmt.Errorf("write the system prompt file: %w", err)
	}
	_, werr := f.WriteString(text)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("write the system prompt file: %w", werr)
	}
	return f.Name(), nil
}

// Failed is the Result of a run that could not start, and its error
// (wrapping ErrAgentFailed).
func Failed(r Runner, req Request, err error) (Result, error) {
	res := Result{CLI: r.Name(), Model: req.Model, ExitCode: -1, Argv: []string{}, Error: err.Error()}
	return res, fmt.Errorf("%w: %w", ErrAgentFailed, err)
}

// ExecCommand runs c, a command r built from req (so a caller that records
// the command before the run starts exactly what it recorded). The child is
// started from an argv (never through a shell) in its own process group; when
// ctx is done or req.Timeout passes, the whole group gets SIGTERM and, after
// req.KillGrace, SIGKILL. Output is streamed: each stdout line is parsed as it
// arrives and its events go to onEvent (called from one goroutine, never after
// ExecCommand returns); only bounded head/tail windows of the output are kept.
//
// The error is nil exactly when res.OK(); otherwise res.Error says why and the
// error wraps ErrCanceled, ErrTimedOut or ErrAgentFailed.
func ExecCommand(ctx context.Context, r Runner, req Request, c Command, onEvent func(Event)) (res Result, err error) {
	start := time.Now()
	res = Result{CLI: r.Name(), Model: req.Model, ExitCode: -1, Argv: []string{}}
	defer func() {
		res.DurationMS = time.Since(start).Milliseconds()
		if p := recover(); p != nil { // a parser bug must not take the caller down
			res.Error = fmt.Sprintf("internal error while reading %s output: %v", r.Name(), p)
			err = fmt.Errorf("%w: %s", ErrAgentFailed, res.Error)
		}
	}()
	fail := func(e error) (Result, error) {
		res.Error = e.Error()
		return res, fmt.Errorf("%w: %w", ErrAgentFailed, e)
	}
	if len(c.Argv) == 0 {
		return fail(fmt.Errorf("%s: empty command", r.Name()))
	}
	res.Argv = RedactArgv(c.Argv, c.PromptArg)
	bin := req.Binary
	if bin == "" {
		if bin, err = LookupCLI(c.Argv[0]); err != nil {
			return fail(err)
		}
	}

	if err := ctx.Err(); err != nil { // never start what is already canceled
		res.Canceled = errors.Is(err, context.Canceled)
		res.TimedOut = !res.Canceled
		res.Error = fmt.Sprintf("%s was not started: %v", r.Name(), err)
		if res.TimedOut {
			return res, fmt.Errorf("%w: %s", ErrTimedOut, res.Error)
		}
		return res, fmt.Errorf("%w: %s", ErrCanceled, res.Error)
	}
	args := append([]string{bin}, c.Argv[1:]...)
	if len(req.Wrap) > 0 {
		args = append(append([]string{}, req.Wrap...), args...)
	}
	parser := r.NewParser(req)
	proc, err := startProcess(args, req, c, parser, onEvent)
	if err != nil {
		return fail(fmt.Errorf("start %s (%s): %w", r.Name(), bin, err))
	}
	var werr error
	res.Canceled, res.TimedOut, werr = proc.wait(ctx, req.Timeout, req.KillGrace)
	cmd, stdout, stderr := proc.cmd, proc.stdout, proc.stderr

	if cmd.ProcessState != nil {
		code, signaled, sig := exitInfo(cmd.ProcessState)
		res.ExitCode = code
		if signaled && !res.Canceled && !res.TimedOut {
			res.Error = fmt.Sprintf("%s was killed by signal %s", r.Name(), sig)
		}
	} else if werr != nil {
		res.Error = fmt.Sprintf("wait for %s: %v", r.Name(), werr)
	}
	res.StdoutBytes, res.StderrBytes = stdout.Total(), stderr.Total()
	res.StderrTail = string(bytes.ToValidUTF8(stderr.Tail(stderrTailOut), []byte("?")))
	if proc.parsePanic != nil {
		panic(proc.parsePanic)
	}
	preErr := res.Error
	parser.Finish(&res, stdout.Bytes(), stderr.Bytes())
	if preErr != "" && res.Error != preErr {
		res.Error = preErr + "; " + res.Error
	}
	// A CLI may echo a credential it was given (e.g. in an auth error): keep
	// the values of secret-named variables out of everything recorded.
	if secrets := secretValues(cmd.Env); len(secrets) > 0 {
		res.Error = scrub(res.Error, secrets)
		res.StderrTail = scrub(res.StderrTail, secrets)
		res.Response = scrub(res.Response, secrets)
	}

	switch {
	case res.TimedOut:
		res.Error = fmt.Sprintf("%s timed out after %s; its process group was killed", r.Name(), timeoutText(req.Timeout, ctx))
		return res, fmt.Errorf("%w: %s", ErrTimedOut, res.Error)
	case res.Canceled:
		res.Error = fmt.Sprintf("%s was canceled; its process group was killed", r.Name())
		return res, fmt.Errorf("%w: %s", ErrCanceled, res.Error)
	case res.Error == "" && res.ExitCode != 0:
		res.Error = fmt.Sprintf("%s exited with code %d", r.Name(), res.ExitCode)
	}
	if res.Error != "" {
		// The CLI's own words say why, more often than its exit code.
		res.Error = Said(r.Name(), res.Error, res.StderrTail, cmd.Env)
		return res, fmt.Errorf("%w: %s", ErrAgentFailed, res.Error)
	}
	return res, nil
}

func timeoutText(d time.Duration, ctx context.Context) string {
	if d > 0 {
		return d.String()
	}
	if dl, ok := ctx.Deadline(); ok {
		return "the deadline " + dl.Format(time.RFC3339)
	}
	return "the deadline"
}

// clip cuts s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("…[%d bytes cut]", len(s)-cut)
}
