package runner_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentinfra/agentinfra/agentcli/gemini"
	"github.com/agentinfra/agentinfra/internal/testing/agentstub"
	"github.com/agentinfra/agentinfra/internal/testing/poll"
	"github.com/agentinfra/agentinfra/runner"
)

// eventLog collects a run's events as they come (from the reader and the
// quiet timer).
type eventLog struct {
	mu  sync.Mutex
	evs []runner.Event
}

func (l *eventLog) add(e runner.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.evs = append(l.evs, e)
}

// kinds is "kind" or "kind:text" (messages) for each event so far.
func (l *eventLog) kinds() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, e := range l.evs {
		k := e.Kind
		if e.Kind == "message" {
			k += ":" + e.Text
		}
		out = append(out, k)
	}
	return strings.Join(out, ",")
}

// scriptRequest is a run of the stub printing lines (the stub's script
// mode, "#" lines pacing it).
func scriptRequest(t *testing.T, lines ...string) runner.Request {
	t.Helper()
	f := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(f, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return stubRequest(agentstub.Build(t), "STUB_MODE=script", "STUB_SCRIPT="+f)
}

const (
	geminiInit   = `{"type":"init","session_id":"s-1","model":"stub"}`
	geminiResult = `{"type":"result","status":"success","stats":{"input_tokens":1,"output_tokens":1,"tool_calls":1}}`
)

func geminiDelta(text string) string {
	return `{"type":"message","role":"assistant","content":"` + text + `","delta":true}`
}

// gemini's assistant text, streamed in deltas, reaches the run's events
// while the CLI is still quiet (a quiet interval after the last delta),
// before its next event, as one message.
func TestExecGeminiTextIsReportedWhenTheStreamGoesQuiet(t *testing.T) {
	gate := filepath.Join(t.TempDir(), "gate")
	req := scriptRequest(t, geminiInit, geminiDelta("Let me look"), geminiDelta(" at the parser."), "#gate "+gate,
		`{"type":"tool_use","tool_name":"read_file","tool_id":"t1","parameters":{"path":"a.go"}}`,
		`{"type":"tool_result","tool_id":"t1","status":"success","output":"ok"}`,
		geminiDelta("Done."), geminiResult)
	var log eventLog
	var execErr error
	exited := make(chan struct{})
	go func() {
		_, execErr = runner.Exec(context.Background(), gemini.Runner{}, req, log.add)
		close(exited)
	}()
	// A failed test still lets the stub finish (never a process left).
	t.Cleanup(func() { os.WriteFile(gate, nil, 0o644); <-exited })
	poll.Eventually(t, func() bool { return log.kinds() == "init,message:Let me look at the parser." },
		"the streamed text never reached the events before the CLI's next event: %s", log.kinds())
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if <-exited; execErr != nil {
		t.Fatal(execErr)
	}
	if got, want := log.kinds(), "init,message:Let me look at the parser.,tool_use,tool_result,message:Done.,result"; got != want {
		t.Fatalf("events %s, want %s", got, want)
	}
}

// The text gemini streamed last is reported once when its output ends
// without another event: a CLI that exits mid-message, and one stopped
// mid-message.
func TestExecGeminiTextIsKeptAtTheEndOfTheStream(t *testing.T) {
	t.Run("exit", func(t *testing.T) {
		req := scriptRequest(t, geminiInit, geminiDelta("I was about"), geminiDelta(" to say"))
		var log eventLog
		res, _ := runner.Exec(context.Background(), gemini.Runner{}, req, log.add)
		if got, want := log.kinds(), "init,message:I was about to say"; got != want {
			t.Fatalf("events %s, want %s", got, want)
		}
		if res.Response != "I was about to say" {
			t.Fatalf("response %q", res.Response)
		}
	})
	t.Run("stop", func(t *testing.T) {
		written := filepath.Join(t.TempDir(), "written")
		req := scriptRequest(t, geminiInit, geminiDelta("Half of"), geminiDelta(" a thought"), "#touch "+written, "#hang")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			// The stop comes once the stub has printed its deltas.
			poll.Until(poll.Timeout, func() bool { _, err := os.Stat(written); return err == nil })
			cancel()
		}()
		var log eventLog
		_, err := runner.Exec(ctx, gemini.Runner{}, req, log.add)
		if !errors.Is(err, runner.ErrCanceled) {
			t.Fatalf("err = %v, want canceled", err)
		}
		if got, want := log.kinds(), "init,message:Half of a thought"; got != want {
			t.Fatalf("events %s, want %s", got, want)
		}
	})
}

// A long message is reported in events of up to MaxEventText, none of its
// text dropped.
func TestExecGeminiLongTextIsReportedWhole(t *testing.T) {
	piece := strings.Repeat("x", 900)
	req := scriptRequest(t, geminiInit, geminiDelta(piece), geminiDelta(piece), geminiDelta(piece), geminiResult)
	var log eventLog
	if _, err := runner.Exec(context.Background(), gemini.Runner{}, req, log.add); err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, e := range log.evs {
		if e.Kind == "message" {
			if len(e.Text) > runner.MaxEventText {
				t.Fatalf("a message event of %d bytes", len(e.Text))
			}
			text.WriteString(e.Text)
		}
	}
	if text.String() != piece+piece+piece {
		t.Fatalf("the messages hold %d of the %d bytes", text.Len(), 3*len(piece))
	}
}
