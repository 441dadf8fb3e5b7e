package full

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/agentinfra/agentinfra/agentcli"
	"github.com/agentinfra/agentinfra/bridge"
	"github.com/agentinfra/agentinfra/internal/testing/fakemodel"
	"github.com/agentinfra/agentinfra/internal/testing/fakeslack"
	"github.com/agentinfra/agentinfra/internal/testing/poll"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision/policy"
	"github.com/agentinfra/agentinfra/workspace"
)

// TestSlackEndToEnd: the real claude CLI against the fake model asks to run
// `touch ok.txt` in a remote session; the real `agentinfra slack` process,
// connected to the fake Slack, posts the request in the session's thread;
// a click from someone who may not decide changes nothing and is logged;
// the connection drops and comes back; an operator's click makes the CLI
// proceed, the message going through "Processing…" to "Approved by"; a
// second approve from a terminal says it was already decided via Slack; a
// local session's run posts nothing.
func TestSlackEndToEnd(t *testing.T) {
	fake := fakemodel.NewClaudeScript(t, fakemodel.ShellOnce("touch", "touch ok.txt", "done"))
	cli := fakemodel.Claude(t, fake.URL)
	slack := fakeslack.New(t)
	bin := taskBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), fakemodel.Timeout)
	defer cancel()

	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".agent"), 0o755)
	os.WriteFile(filepath.Join(root, ".agent", "config.yaml"), []byte(`supervision:
  operators: ["@bo"]
slack:
  channel: C0AGENTS
  users:
    ana: U0ANA
    bo: U0BO
    eve: U0EVE
`), 0o644)
	ws, err := workspace.Find(root, "--root", root)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenWorkspace(ctx, ws, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	var logs bytes.Buffer
	var logMu sync.Mutex
	svc := exec.Command(bin, "slack", "--root", root)
	svc.Env = append(os.Environ(), "SLACK_APP_TOKEN="+fakeslack.AppToken, "SLACK_BOT_TOKEN="+fakeslack.BotToken, envSlackAPIURL+"="+slack.APIURL())
	svc.Stderr = lockedWriter{&logs, &logMu}
	if err := svc.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		svc.Process.Signal(syscall.SIGTERM)
		svc.Wait()
		if t.Failed() {
			logMu.Lock()
			t.Logf("agentinfra slack:\n%s", logs.String())
			logMu.Unlock()
		}
	}()
	if err := slack.Connected(ctx, 1); err != nil {
		t.Fatal(err)
	}

	run := func(ses store.Session, onMessage func()) {
		t.Helper()
		done := make(chan error, 1)
		go func() {
			_, err := agentcli.RunSupervised(ctx, bridge.Request{CLI: "claude", Binary: cli.Binary, Model: cli.Model, Dir: cli.Dir, Env: cli.Env, CleanEnv: true,
				ExtraArgs: cli.ExtraArgs, Prompt: "Please touch ok.txt"},
				bridge.Options{Store: st, Session: ses, Policy: func() *policy.Policy { return &policy.Policy{Root: cli.Dir, AskAll: true} }})
			done <- err
		}()
		onMessage()
		if err := <-done; err != nil {
			t.Fatalf("the run: %v", err)
		}
	}
	newSession := func(mode string) store.Session {
		ses, err := st.CreateSession(ctx, store.NewSession{Owner: "ana", Workspace: cli.Dir, Mode: mode, CLI: "claude", Title: "touch ok.txt"})
		if err != nil {
			t.Fatal(err)
		}
		if ses, err = st.SetSessionStatus(ctx, ses.ID, store.Transition{To: store.SessionActive, By: "ana"}); err != nil {
			t.Fatal(err)
		}
		return ses
	}
	message := func(prefix string) fakeslack.Message {
		var out fakeslack.Message
		if err := slack.Wait(ctx, prefix, func() bool {
			for _, m := range slack.Messages() {
				if strings.HasPrefix(m.Versions[0].Text, prefix) {
					out = m
					return true
				}
			}
			return false
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	click := func(u fakeslack.User, m fakeslack.Message, id int64) {
		env, err := slack.Click(u, m.Channel, m.TS, "approve", strconv.FormatInt(id, 10))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := slack.Acked(ctx, env); err != nil {
			t.Fatal(err)
		}
	}

	ses := newSession(store.ModeRemote)
	var reqID int64
	run(ses, func() {
		thread := message(fmt.Sprintf("Session %d ", ses.ID))
		m := message("Request ")
		if m.ThreadTS != thread.TS || !strings.Contains(string(m.Versions[0].Blocks), "touch ok.txt") {
			t.Fatalf("the request's message: %+v", m)
		}
		pending, _ := st.Pending(ctx)
		if len(pending) != 1 {
			t.Fatalf("pending: %+v", pending)
		}
		reqID = pending[0].ID
		// eve is linked but neither the owner nor an operator.
		click(fakeslack.User{ID: "U0EVE", Name: "eve"}, m, reqID)
		slack.Wait(ctx, "eve's refusal", func() bool {
			for _, e := range slack.Ephemerals() {
				if e.User == "U0EVE" && strings.Contains(e.Text, "Not allowed") {
					return true
				}
			}
			return false
		})
		if r, _ := st.Request(ctx, reqID); r.Status != store.StatusPending {
			t.Fatalf("eve's click decided: %+v", r)
		}
		slack.Drop()
		if err := slack.Connected(ctx, 2); err != nil {
			t.Fatal(err)
		}
		click(fakeslack.User{ID: "U0BO", Name: "bo"}, m, reqID)
	})
	if _, err := os.Stat(filepath.Join(cli.Dir, "ok.txt")); err != nil {
		t.Fatalf("approved on Slack, but the CLI did not run touch: %v", err)
	}
	m := message("Request ")
	if err := slack.Wait(ctx, "the outcome", func() bool {
		for _, x := range slack.Messages() {
			if x.TS == m.TS {
				m = x
				return strings.Contains(x.Last().Text, "Approved by <@U0BO>")
			}
		}
		return false
	}); err != nil {
		t.Fatalf("%v: %q", err, m.Versions)
	}
	if n := len(m.Versions); n != 3 || !strings.Contains(m.Versions[1].Text, "Processing…") {
		t.Fatalf("the message's versions: %+v", m.Versions)
	}
	evs, _ := st.Audit(ctx, ses.ID)
	refused := 0
	for _, e := range evs {
		if e.Action == "slack_refused" && e.Actor == "eve" {
			refused++
		}
	}
	if refused != 1 {
		t.Fatalf("eve's click is not in the audit log: %+v", evs)
	}
	// A second approve from a terminal.
	approve := exec.Command(bin, "approve", strconv.FormatInt(reqID, 10), "--root", root)
	approve.Env = append(os.Environ(), "AGENTINFRA_USER=ana")
	out, err := approve.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "already approved via slack by @bo") {
		t.Fatalf("the terminal's second approve: %v\n%s", err, out)
	}

	// A local session's run posts nothing.
	os.Remove(filepath.Join(cli.Dir, "ok.txt"))
	before := len(slack.Calls("chat.postMessage"))
	local := newSession(store.ModeLocal)
	run(local, func() {
		var id int64
		poll.Eventually(t, func() bool {
			p, _ := st.Pending(ctx)
			for _, r := range p {
				id = r.ID
			}
			return id != 0
		}, "the local session raised no request")
		if _, err := st.Decide(ctx, store.Decision{RequestID: id, Approve: true, By: "ana", Surface: store.SurfaceTerminal}); err != nil {
			t.Error(err)
		}
	})
	st.SetSessionStatus(ctx, local.ID, store.Transition{To: store.SessionTerminated, By: "ana", Reason: "done"})
	// Then the remote session ends: once its end is posted, the service has
	// read past everything the local one did.
	st.SetSessionStatus(ctx, ses.ID, store.Transition{To: store.SessionTerminated, By: "ana", Reason: "the run finished"})
	message(fmt.Sprintf("Session %d terminated", ses.ID))
	if after := len(slack.Calls("chat.postMessage")); after != before+1 {
		t.Fatalf("the local session posted: %d messages before, %d after (want only the remote session's end)", before, after)
	}
}

type lockedWriter struct {
	b  *bytes.Buffer
	mu *sync.Mutex
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}
