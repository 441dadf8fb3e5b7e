package runner

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentinfra/agentinfra/contain"
)

// process is one started agent CLI: the leader of its own process group, and
// the readers that stream its output into bounded windows.
type process struct {
	cmd            *exec.Cmd
	outR, errR     *os.File
	stdout, stderr *headTail
	readers        sync.WaitGroup
	// parsePanic is what the parser panicked with, if it did (the reader
	// keeps draining stdout so the child never blocks).
	parsePanic any
}

// startProcess runs args (never through a shell) in req.Dir with the merged
// environment, in a new process group. Each stdout line goes through parser,
// and its events to onEvent (from one goroutine); stdout and stderr are kept
// in head/tail windows.
func startProcess(args []string, req Request, c Command, parser Parser, onEvent func(Event)) (*process, error) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = req.Dir
	if err := contain.Setup(cmd, req.CleanEnv, req.Env, c.Env); err != nil {
		return nil, err
	}
	if c.Stdin != "" {
		cmd.Stdin = strings.NewReader(c.Stdin)
		// Wait also waits for the stdin copy: bound it, in case something left
		// in the group holds stdin open without reading.
		cmd.WaitDelay = pipeDrain
	}
	startInGroup(cmd)
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	if err := cmd.Start(); err != nil {
		for _, f := range []*os.File{outR, outW, errR, errW} {
			f.Close()
		}
		return nil, err
	}
	outW.Close()
	errW.Close()

	p := &process{cmd: cmd, outR: outR, errR: errR,
		stdout: newHeadTail(stdoutHead, stdoutTail), stderr: newHeadTail(stderrHead, stderrTail)}
	p.readers.Add(2)
	go func() {
		defer p.readers.Done()
		defer func() {
			if r := recover(); r != nil {
				p.parsePanic = r
				io.Copy(io.Discard, outR) // keep draining so the child never blocks
			}
		}()
		out := newParsing(parser, onEvent)
		defer out.end()
		readLines(io.TeeReader(outR, p.stdout), maxLine, out.line)
	}()
	go func() {
		defer p.readers.Done()
		io.Copy(p.stderr, errR)
	}()
	return p, nil
}

// wait waits for the leader to exit. When ctx is done or timeout (0 = none)
// passes first, the group gets SIGTERM and, after grace (0 = 5 s), SIGKILL.
// Either way whatever is left in the group is killed (no orphans) and the
// pipes are drained, for at most pipeDrain once the group is gone (a
// grandchild that escaped with setsid may hold them open).
func (p *process) wait(ctx context.Context, timeout, grace time.Duration) (canceled, timedOut bool, werr error) {
	runCtx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	pid := p.cmd.Process.Pid
	waitErr := make(chan error, 1)
	go func() { waitErr <- p.cmd.Wait() }()

	select {
	case werr = <-waitErr:
	case <-runCtx.Done():
		if errors.Is(ctx.Err(), context.Canceled) {
			canceled = true
		} else {
			timedOut = true
		}
		if grace <= 0 {
			grace = defaultGrace
		}
		signalGroup(pid, syscall.SIGTERM)
		select {
		case werr = <-waitErr:
		case <-time.After(grace):
			signalGroup(pid, syscall.SIGKILL)
			werr = <-waitErr
		}
	}
	signalGroup(pid, syscall.SIGKILL)

	drained := make(chan struct{})
	go func() { p.readers.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(pipeDrain):
		p.outR.Close() // unblocks the readers
		p.errR.Close()
		<-drained
	}
	p.outR.Close()
	p.errR.Close()
	return canceled, timedOut, werr
}
