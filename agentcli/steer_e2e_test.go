package agentcli

// A live supervised run steered through its Bridge, with each real CLI:
// Send (the next user message reaches the model), pause/resume of the
// session from the store (the CLI's process group stops and continues),
// and Interrupt while a request waits (the request is withdrawn).

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/bridge"
	"github.com/agentinfra/agentinfra/internal/testing/fakemodel"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision/policy"
)

// start starts c's CLI under supervision with prompt.
func (s *setup) start(t *testing.T, ctx context.Context, prompt string) bridge.Bridge {
	t.Helper()
	pol := policy.Load(s.cli.Dir, s.paths)
	b, err := StartSupervised(ctx, bridge.Request{CLI: s.ses.CLI, Binary: s.cli.Binary, Model: s.cli.Model, Dir: s.cli.Dir, Env: s.cli.Env, CleanEnv: true,
		ExtraArgs: s.cli.ExtraArgs, Prompt: prompt}, bridge.Options{Store: s.st, Session: s.ses, Policy: func() *policy.Policy { return pol }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close(); b.Wait() })
	return b
}

// waitPending waits for the session's pending request.
func (s *setup) waitPending(t *testing.T, ctx context.Context) store.Request {
	t.Helper()
	changes, _ := s.st.Changes(ctx)
	for {
		for _, r := range s.requests(t) {
			if r.Status == store.StatusPending {
				return r
			}
		}
		select {
		case <-ctx.Done():
			t.Fatal("no request was raised")
		case <-changes:
		}
	}
}

// waitStatus waits for request id to leave pending.
func (s *setup) waitDecided(t *testing.T, ctx context.Context, id int64) store.Request {
	t.Helper()
	changes, _ := s.st.Changes(ctx)
	for {
		r, err := s.st.Request(ctx, id)
		if err == nil && r.Status != store.StatusPending {
			return r
		}
		select {
		case <-ctx.Done():
			t.Fatalf("request %d is still %s", id, r.Status)
		case <-changes:
		}
	}
}

func TestSendReachesTheModelAsTheNextMessage(t *testing.T) {
	forEachCLI(t, func(t *testing.T, c cliCase) {
		s := newSetup(t, c, "", "")
		ctx, cancel := context.WithTimeout(context.Background(), fakemodel.Timeout)
		defer cancel()
		b := s.start(t, ctx, "Say hello") // no trigger: the fake answers in text
		select {
		case <-b.TurnEnded():
		case <-ctx.Done():
			t.Fatal("the first turn never ended")
		}
		const next = "SECOND-MESSAGE-from-the-person"
		if err := b.Send(ctx, next); err != nil {
			t.Fatalf("Send: %v", err)
		}
		select {
		case <-b.TurnEnded():
		case <-ctx.Done():
			t.Fatal("the turn of the sent message never ended")
		}
		if !strings.Contains(s.lastBody(c.path), next) {
			t.Fatalf("the sent message did not reach the model; last request: %.500s", s.lastBody(c.path))
		}
	})
}

// procState is the state letter of pid in /proc (T: stopped).
func procState(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 || i+2 >= len(b) {
		return ""
	}
	return string(b[i+2])
}

func waitState(t *testing.T, ctx context.Context, pid int, stopped bool) {
	t.Helper()
	for (procState(pid) == "T") != stopped {
		select {
		case <-ctx.Done():
			t.Fatalf("pid %d never became stopped=%v (state %s)", pid, stopped, procState(pid))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// One run per CLI for both (each real run costs seconds): the session
// paused and resumed while its request waits, then Interrupt.
func TestPauseResumeThenInterruptWithdrawsTheRequest(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	forEachCLI(t, func(t *testing.T, c cliCase) {
		s := newSetup(t, c, "", "")
		ctx, cancel := context.WithTimeout(context.Background(), fakemodel.Timeout)
		defer cancel()
		b := s.start(t, ctx, "Please touch ok.txt")
		r := s.waitPending(t, ctx)
		pid := b.(bridge.Started).Process().Cmd.Process.Pid
		if _, err := s.st.SetSessionStatus(ctx, s.ses.ID, store.Transition{To: store.SessionPaused, By: "ana", Surface: store.SurfaceTerminal}); err != nil {
			t.Fatal(err)
		}
		waitState(t, ctx, pid, true)
		if _, err := s.st.SetSessionStatus(ctx, s.ses.ID, store.Transition{To: store.SessionActive, By: "ana", Surface: store.SurfaceTerminal}); err != nil {
			t.Fatal(err)
		}
		waitState(t, ctx, pid, false)
		// The resumed CLI answers its protocol: an interrupt withdraws the
		// request it asked (claude control_cancel_request, codex the turn
		// interrupted, gemini session/cancel).
		if err := b.Interrupt(ctx); err != nil {
			t.Fatalf("Interrupt: %v", err)
		}
		if got := s.waitDecided(t, ctx, r.ID); got.Status != store.StatusWithdrawn {
			t.Fatalf("after Interrupt the request is %s (%s), want withdrawn", got.Status, got.Reason)
		}
		b.Close()
		b.Wait()
		if s.fileExists() {
			t.Fatal("interrupted, but ok.txt exists")
		}
	})
}
