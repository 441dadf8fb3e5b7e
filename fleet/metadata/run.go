package metadata

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
	"unicode/utf8"
)

var lookPath = exec.LookPath

// Messages of fields that did not run.
const (
	ErrNoTaskCLI = "task CLI not available"
)

// runField runs one field: `task --taskfile PATH NAME --silent` in dir, in
// its own process group, which is killed when the run outlives the timeout
// or ctx, and once the run ends (so nothing it started is left).
func runField(ctx context.Context, bin, taskfile, dir, name string, o Options) Field {
	if strings.HasPrefix(name, "-") { // it would reach go-task as a flag
		return errField("a task name starting with - cannot be run")
	}
	rctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	cmd := exec.CommandContext(rctx, bin, "--taskfile", taskfile, name, "--silent")
	cmd.Dir = dir
	cmd.Env = taskEnv(o.Env)
	stdout := &headBuffer{max: o.MaxValueBytes}
	stderr := &tailBuffer{max: 2048}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	ownGroup(cmd)
	cmd.Cancel = func() error { return killGroup(cmd.Process) }
	// A process that left the group but kept the output open must not hold
	// the field past its timeout.
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if cmd.Process != nil {
		killLeftovers(cmd.Process) // what the task left running in its group
	}
	switch {
	case ctx.Err() != nil:
		return errField("not collected: " + ctx.Err().Error())
	case errors.Is(rctx.Err(), context.DeadlineExceeded):
		return errField(fmt.Sprintf("timed out after %s; killed with its processes", o.Timeout))
	case err != nil:
		var ee *exec.ExitError
		if tail := stderr.tail(); tail != "" {
			return errField(tail)
		}
		if errors.As(err, &ee) && ee.ExitCode() >= 0 {
			return errField(fmt.Sprintf("exited with code %d", ee.ExitCode()))
		}
		return errField(err.Error())
	}
	var f Field
	if v := strings.TrimSpace(strings.ToValidUTF8(stdout.value(), "\uFFFD")); v != "" {
		f.Value = &v
	}
	if stdout.total > o.MaxValueBytes {
		f.Error = ptr(fmt.Sprintf("value cut to its first %d bytes (the task printed %d)", o.MaxValueBytes, stdout.total))
	}
	return f
}

func errField(msg string) Field { return Field{Error: &msg} }

func ptr[T any](v T) *T { return &v }

// headBuffer keeps the first max bytes written and counts the rest.
type headBuffer struct {
	b     []byte
	max   int
	total int
}

func (h *headBuffer) Write(p []byte) (int, error) {
	h.total += len(p)
	if room := h.max - len(h.b); room > 0 {
		h.b = append(h.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// value is the kept bytes, not ending inside a UTF-8 sequence.
func (h *headBuffer) value() string {
	b := h.b
	if h.total > len(b) {
		for i := 0; i < utf8.UTFMax && len(b) > 0 && !utf8.Valid(b); i++ {
			b = b[:len(b)-1]
		}
	}
	return string(b)
}

// tailBuffer keeps the last max bytes written.
type tailBuffer struct {
	b   []byte
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 2*t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

// tail is the last lines written, at most max bytes, trimmed.
func (t *tailBuffer) tail() string {
	b := t.b
	if len(b) > t.max {
		b = b[len(b)-t.max:]
		if i := strings.IndexByte(string(b), '\n'); i >= 0 { // from a line's start
			b = b[i+1:]
		}
	}
	return strings.TrimSpace(strings.ToValidUTF8(string(b), "\uFFFD"))
}
