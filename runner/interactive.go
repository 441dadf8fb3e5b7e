package runner

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/agentinfra/agentinfra/contain"
)

// Interactive is an agent CLI started for a conversation over its standard
// input and output (the supervised bridges: claude stream-json, codex
// app-server, gemini ACP), in its own process group like Exec's children,
// so that Kill reaches everything it spawned (gemini re-executes itself as
// a child). Its stderr is kept in a bounded tail.
type Interactive struct {
	Cmd    *exec.Cmd
	Stdin  io.WriteCloser
	Stdout io.ReadCloser
	stderr *headTail
	done   chan struct{}
	once   sync.Once
	werr   error
}

// StartInteractive starts argv (never through a shell; argv[0] is looked up
// like Exec's CLIs unless it is a path) in dir, with the inherited
// environment (or none when clean) plus env.
func StartInteractive(argv []string, dir string, env []string, clean bool) (*Interactive, error) {
	if len(argv) == 0 {
		return nil, errors.New("empty command")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	if err := contain.Setup(cmd, clean, env); err != nil {
		return nil, err
	}
	startInGroup(cmd)
	p := &Interactive{Cmd: cmd, stderr: newHeadTail(stderrHead, stderrTail), done: make(chan struct{})}
	cmd.Stderr = p.stderr
	var err error
	if p.Stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	if p.Stdout, err = cmd.StdoutPipe(); err != nil {
		return nil, err
	}
	cmd.WaitDelay = pipeDrain
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	go func() { p.werr = cmd.Wait(); close(p.done) }()
	return p, nil
}

// Done is closed when the process has exited (and its output is drained).
func (p *Interactive) Done() <-chan struct{} { return p.done }

// Signal sends sig to the whole process group.
func (p *Interactive) Signal(sig syscall.Signal) error { return signalGroup(p.Cmd.Process.Pid, sig) }

// Stop ends the group: SIGTERM, then SIGKILL after grace (0 = 5 s) if the
// leader is still there; whatever is left of the group is killed either way.
func (p *Interactive) Stop(grace time.Duration) {
	p.once.Do(func() {
		if grace <= 0 {
			grace = defaultGrace
		}
		p.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(grace):
		}
		p.Signal(syscall.SIGKILL)
	})
}

// Wait waits for the exit and returns the exit code (128+signal for a
// signal death) and the tail of stderr.
func (p *Interactive) Wait() (code int, stderrTail string, err error) {
	<-p.done
	signalGroup(p.Cmd.Process.Pid, syscall.SIGKILL) // nothing of the group outlives the run
	code = -1
	if st := p.Cmd.ProcessState; st != nil {
		code, _, _ = exitInfo(st)
	}
	tail := string(bytes.ToValidUTF8(p.stderr.Tail(stderrTailOut), []byte("?")))
	if secrets := secretValues(p.Cmd.Env); len(secrets) > 0 {
		tail = scrub(tail, secrets)
	}
	var ee *exec.ExitError
	if errors.As(p.werr, &ee) {
		return code, tail, nil
	}
	return code, tail, p.werr
}

// ClipEventText cuts an event's text the way Exec's events are cut.
func ClipEventText(s string) string { return clip(s, MaxEventText) }

// SecretValues are the values of secret-named variables in env (to scrub
// them from what is recorded).
func SecretValues(env []string) []string { return secretValues(env) }

// Scrub replaces each secret in s.
func Scrub(s string, secrets []string) string { return scrub(s, secrets) }
