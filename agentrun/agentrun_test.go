package agentrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/agentcli"
	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/internal/testing/agentstub"
	"github.com/agentinfra/agentinfra/runner"
)

// stubRun is a run of the stub agent (as gemini) recorded as files in a
// temporary folder, publishing on a private bus.
func stubRun(t *testing.T, env ...string) (*Run, runner.Runner, runner.Request, runner.Command) {
	t.Helper()
	dir := t.TempDir()
	rn, _ := agentcli.Runner("gemini")
	req := runner.Request{Model: "m", Prompt: "do it", Binary: agentstub.Build(t), Env: env, Dir: dir, Timeout: 30 * time.Second, KillGrace: 200 * time.Millisecond}
	cmd, err := rn.Command(req)
	if err != nil {
		t.Fatal(err)
	}
	rec := &Record{RunID: "papi-1", Caller: CallerFleet, Agent: "@papi", Summary: "do it"}
	return &Run{Record: rec, Root: "/w", Bus: events.New(),
		Recorder: Files{RecordPath: filepath.Join(dir, "papi-1.result.json"), LogPath: filepath.Join(dir, "papi-1.log.jsonl")}}, rn, req, cmd
}

// The run's log holds every event the CLI printed between run_started and
// run_ended; the bus gets them as they come; a process the agent started
// in a session of its own is gone when Exec returns.
func TestExecLogsEveryEventAndLeavesNoProcess(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	r, rn, req, cmd := stubRun(t, "STUB_MODE=detach", "STUB_PIDFILE="+pidFile)
	sub := r.Bus.Subscribe(events.Filter{RunID: "papi-1"}, 0)
	defer sub.Close()
	var seen []string
	res, err := r.Exec(context.Background(), rn, req, cmd, func(e runner.Event) { seen = append(seen, e.Kind) })
	if err != nil {
		t.Fatalf("exec: %v (%+v)", err, res)
	}
	grandchild := agentstub.ReadPid(t, pidFile)
	if !agentstub.ProcessGone(grandchild) {
		t.Fatalf("the agent's setsid grandchild %d outlived the run", grandchild)
	}
	r.Record.Conclude(res, err, false, time.Now())

	items, err := ReadLog(r.Recorder.(Files).LogPath)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for i, it := range items {
		if it.Seq != int64(i+1) || it.Time.IsZero() {
			t.Errorf("item %d: seq %d time %v", i, it.Seq, it.Time)
		}
		kinds = append(kinds, it.Kind)
	}
	if got, want := strings.Join(kinds, ","), "run_started,init,tool_use,tool_result,message,result,run_ended"; got != want {
		t.Errorf("log kinds = %s, want %s", got, want)
	}
	if items[2].Tool != "read_file" || !strings.Contains(items[2].Text, "a.go") || !strings.Contains(items[len(items)-1].Text, "1 process(es) the agent left were killed") {
		t.Errorf("tool call %+v, end %+v", items[2], items[len(items)-1])
	}
	if strings.Join(seen, ",") != "init,tool_use,tool_result,message,result" {
		t.Errorf("onEvent saw %v", seen)
	}
	var busKinds []string
	for {
		e, ok := sub.TryNext()
		if !ok {
			break
		}
		if e.Agent != "papi" || e.Root != "/w" {
			t.Errorf("event %+v: agent or root", e)
		}
		k := string(e.Kind)
		if e.Run != nil {
			k += ":" + e.Run.Kind
		}
		busKinds = append(busKinds, k)
	}
	if got := strings.Join(busKinds, ","); !strings.HasPrefix(got, "run.started,run.event:run_started,run.event:init,") || !strings.HasSuffix(got, "run.event:run_ended") {
		t.Errorf("bus events = %s", got)
	}
	// The record was saved as the run began (running, with its scope).
	var saved Record
	b, _ := os.ReadFile(r.Recorder.(Files).RecordPath)
	if err := json.Unmarshal(b, &saved); err != nil || saved.Status != StatusRunning || saved.Scope.Zero() || saved.StartedAt == nil {
		t.Errorf("record saved at the start: %+v, %v", saved, err)
	}
}

// Cancelling the run kills the CLI's group and the process it detached.
func TestExecCanceledLeavesNoProcess(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	r, rn, req, cmd := stubRun(t, "STUB_MODE=detach", "STUB_HANG=1", "STUB_PIDFILE="+pidFile)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		agentstub.ReadPid(t, pidFile)
		cancel()
	}()
	res, err := r.Exec(ctx, rn, req, cmd, nil)
	if !errors.Is(err, runner.ErrCanceled) {
		t.Fatalf("err = %v", err)
	}
	if pid := agentstub.ReadPid(t, pidFile); !agentstub.ProcessGone(pid) {
		t.Fatalf("the detached grandchild %d outlived the canceled run", pid)
	}
	r.Record.Conclude(res, err, false, time.Now())
	if r.Record.Outcome != OutcomeCanceled || r.Record.Status != StatusStopped {
		t.Errorf("record after cancel: %s / %s", r.Record.Outcome, r.Record.Status)
	}
}

func TestConclude(t *testing.T) {
	ok := runner.Result{ExitCode: 0, SessionID: "s1"}
	for _, c := range []struct {
		name    string
		res     runner.Result
		err     error
		stopped bool
		outcome string
		status  string
		reason  string
	}{
		{"success", ok, nil, false, OutcomeSuccess, StatusCompleted, "completed"},
		{"failed", runner.Result{ExitCode: 7, Error: "gemini exited with code 7"}, runner.ErrAgentFailed, false, OutcomeFailed, StatusFailed, "gemini exited with code 7"},
		{"timed out", runner.Result{TimedOut: true, Error: "gemini timed out after 1s"}, runner.ErrTimedOut, false, OutcomeTimedOut, StatusFailed, "timed out: gemini timed out after 1s"},
		{"canceled", runner.Result{Canceled: true, Error: "gemini was canceled"}, runner.ErrCanceled, false, OutcomeCanceled, StatusStopped, "canceled: gemini was canceled"},
		{"stopped", runner.Result{Canceled: true}, runner.ErrCanceled, true, OutcomeStopped, StatusStopped, "stopped"},
		{"could not start", runner.Result{}, errors.New("unknown agent CLI"), false, OutcomeFailed, StatusFailed, "unknown agent CLI"},
	} {
		var r Record
		r.Conclude(c.res, c.err, c.stopped, time.Now())
		if r.Outcome != c.outcome || r.Status != c.status || r.Reason != c.reason || r.ExitCode == nil || r.EndedAt == nil {
			t.Errorf("%s: %s / %s / %q", c.name, r.Outcome, r.Status, r.Reason)
		}
	}
}

// A follower of a live log gets every item in order, as the writer
// appends them (a line half-written waits for its end), and stops at
// run_ended.
func TestFollowLogStreamsALiveRun(t *testing.T) {
	dir := t.TempDir()
	files := Files{RecordPath: filepath.Join(dir, "r.json"), LogPath: filepath.Join(dir, "r.log.jsonl")}
	var got []string
	var mu sync.Mutex
	followed := make(chan error, 1)
	go func() {
		followed <- FollowLog(context.Background(), files.LogPath, func() bool { return true }, func(it events.RunItem) error {
			mu.Lock()
			got = append(got, it.Text)
			mu.Unlock()
			return nil
		})
	}()
	w, err := files.Log(nil)
	if err != nil {
		t.Fatal(err)
	}
	const n = 50
	for i := range n {
		w.Append(events.RunItem{Seq: int64(i + 1), Kind: "message", Text: fmt.Sprint(i)})
		if i%10 == 0 {
			time.Sleep(20 * time.Millisecond)
		}
	}
	// Half a line: the follower must not take it yet.
	raw, _ := os.OpenFile(files.LogPath, os.O_WRONLY|os.O_APPEND, 0)
	raw.WriteString(`{"seq":51,"kind":"message","te`)
	time.Sleep(50 * time.Millisecond)
	raw.WriteString(`xt":"50"}` + "\n")
	raw.Close()
	w.Append(events.RunItem{Seq: 52, Kind: ItemEnded, Text: "end"})
	w.Close()
	select {
	case err := <-followed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the follower did not stop at run_ended")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != n+2 || got[n] != "50" || got[n+1] != "end" {
		t.Fatalf("followed %d items: %v", len(got), got)
	}
	for i := range n {
		if got[i] != fmt.Sprint(i) {
			t.Fatalf("item %d = %q", i, got[i])
		}
	}
}

// A log whose writer died without run_ended: the follow ends once live
// says so, after reading what was written.
func TestFollowLogEndsWhenTheRunIsGone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.log.jsonl")
	w, _ := Files{LogPath: path}.Log(nil)
	w.Append(events.RunItem{Seq: 1, Kind: ItemStarted})
	w.Append(events.RunItem{Seq: 2, Kind: "tool_use", Tool: "run_shell_command"})
	w.Close()
	var n int
	err := FollowLog(context.Background(), path, func() bool { return false }, func(events.RunItem) error { n++; return nil })
	if err != nil || n != 2 {
		t.Fatalf("follow of a dead run: %d items, %v", n, err)
	}
}
