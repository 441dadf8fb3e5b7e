package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// taskNow is the clock of every in-process run.
var taskNow = time.Date(2026, 11, 21, 14, 5, 0, 0, time.UTC)

// cliOpts is what a test sets about the process the CLI runs in.
type cliOpts struct {
	tty   bool
	width int
	// env is the whole environment; HOME is dir unless env sets it.
	env   map[string]string
	stdin string
}

// testFactory is the Factory of an in-process run in dir: a pinned clock, a
// private environment, buffers for the streams.
func testFactory(dir string, o cliOpts) (f *Factory, stdout, stderr *bytes.Buffer) {
	env := map[string]string{"HOME": dir}
	for k, v := range o.env {
		env[k] = v
	}
	stdout, stderr = new(bytes.Buffer), new(bytes.Buffer)
	return &Factory{
		IO:     &IOStreams{In: strings.NewReader(o.stdin), Out: stdout, ErrOut: stderr, IsTTY: o.tty, Width: o.width},
		Cwd:    dir,
		Now:    func() time.Time { return taskNow },
		Getenv: func(k string) string { return env[k] },
	}, stdout, stderr
}

// runCLI runs `agentinfra args...` in-process in dir, as main does, and
// returns its exit code, stdout and stderr.
func runCLI(t testing.TB, dir string, o cliOpts, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	f, out, errb := testFactory(dir, o)
	code = run(context.Background(), args, f)
	return code, out.String(), errb.String()
}
