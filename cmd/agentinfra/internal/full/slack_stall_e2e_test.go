package full

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/agentcli"
	"github.com/agentinfra/agentinfra/bridge"
	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/internal/testing/fakemodel"
	"github.com/agentinfra/agentinfra/internal/testing/fakeslack"
	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision/keepmoving"
	"github.com/agentinfra/agentinfra/supervision/policy"
	"github.com/agentinfra/agentinfra/workspace"
)

// TestSlackStallEscalationEndToEnd: the real claude CLI runs a remote
// session under keepmoving.Run with the watchdog thresholds of the
// workspace's config.yaml set to a second; the fake model holds its first
// answer back until the test has seen the escalation, so the agent is
// silent. The real `agentinfra slack` process, connected to the fake
// Slack, posts in the session's thread the stall alert, shows the
// watchdog's nudge on it, then posts the escalation with the configured
// channel mention (`<!here>`) naming the owner, and settles the alert's
// message as escalated.
func TestSlackStallEscalationEndToEnd(t *testing.T) {
	const nudge = "NUDGE-STALL-E2E"
	release := make(chan struct{})
	var releaseOnce sync.Once
	unblock := func() { releaseOnce.Do(func() { close(release) }) }
	defer unblock()
	fake := fakemodel.NewClaudeScript(t, func(a fakemodel.Ask) fakemodel.Answer {
		if a.N == 0 {
			// A model that thinks until the test has seen the escalation
			// (bounded, so a failing test still ends).
			select {
			case <-release:
			case <-time.After(fakemodel.Timeout):
			}
			return fakemodel.Answer{Text: "Done thinking."}
		}
		return fakemodel.Answer{Text: "ok"}
	})
	cli := fakemodel.Claude(t, fake.URL)
	slack := fakeslack.New(t)
	bin := taskBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), fakemodel.Timeout)
	defer cancel()

	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".agent"), 0o755)
	os.WriteFile(filepath.Join(root, ".agent", "config.yaml"), []byte(`supervision:
  operators: ["@bo"]
  watchdog:
    threshold: 1s
    escalation_wait: 1s
    max_retries: 1
    nudge: "`+nudge+`"
slack:
  channel: C0AGENTS
  escalation_mention: "<!here>"
  users:
    ana: U0ANA
    bo: U0BO
`), 0o644)
	ws, err := workspace.Find(root, "--root", root)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := keepmoving.LoadConfig(ws)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Watchdog; got.Threshold != time.Second || got.EscalationWait != time.Second || got.MaxRetries != 1 {
		t.Fatalf("the watchdog's config as read: %+v", got)
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

	ses, err := st.CreateSession(ctx, store.NewSession{Owner: "ana", Workspace: cli.Dir, Mode: store.ModeRemote, CLI: "claude", Title: "think hard"})
	if err != nil {
		t.Fatal(err)
	}
	if ses, err = st.SetSessionStatus(ctx, ses.ID, store.Transition{To: store.SessionActive, By: "ana"}); err != nil {
		t.Fatal(err)
	}
	type ran struct {
		out keepmoving.Outcome
		err error
	}
	done := make(chan ran, 1)
	go func() {
		pol := &policy.Policy{Root: cli.Dir, AskAll: true}
		start := func(ctx context.Context, w keepmoving.Watch) (runner.Conversation, error) {
			return agentcli.StartSupervised(ctx, bridge.Request{CLI: "claude", Binary: cli.Binary, Model: cli.Model, Dir: cli.Dir, Env: cli.Env, CleanEnv: true,
				ExtraArgs: cli.ExtraArgs, Prompt: "Think hard about the task"},
				bridge.Options{Store: st, Session: ses, Policy: func() *policy.Policy { return pol }, OnEvent: w.OnEvent, BeforeApprovedEdit: w.BeforeApprovedEdit})
		}
		_, out, err := keepmoving.Run(ctx, start, keepmoving.Options{Config: cfg, Store: st, Session: ses, CLI: "claude", Model: cli.Model, Bus: events.New(), Root: root})
		done <- ran{out, err}
	}()

	// posted waits for the chat.postMessage call whose text starts with
	// prefix, and gives its place among the calls.
	posted := func(prefix string) (fakeslack.Call, int) {
		t.Helper()
		var call fakeslack.Call
		idx := -1
		if err := slack.Wait(ctx, prefix, func() bool {
			for i, c := range slack.Calls("chat.postMessage") {
				if strings.HasPrefix(c.Params["text"], prefix) {
					call, idx = c, i
					return true
				}
			}
			return false
		}); err != nil {
			t.Fatal(err)
		}
		return call, idx
	}
	escalation := fmt.Sprintf("<!here> :rotating_light: Session %d's agent is still silent", ses.ID)
	esc, escAt := posted(escalation)
	unblock() // the escalation is seen: the model may answer now
	thread, _ := posted(fmt.Sprintf("Session %d ", ses.ID))

	// The escalated alert (claude may answer a nudge with an event that
	// counts as activity: an earlier alert may have closed self-recovered).
	alerts, err := st.Alerts(ctx, ses.ID)
	if err != nil {
		t.Fatal(err)
	}
	var a store.Alert
	for _, x := range alerts {
		if x.Status == store.AlertEscalated {
			if a.ID != 0 {
				t.Fatalf("two escalated alerts: %+v", alerts)
			}
			a = x
		}
	}
	if a.ID == 0 || a.Nudges != 1 {
		t.Fatalf("no alert escalated after 1 nudge in the store: %+v", alerts)
	}
	alertCall, alertAt := posted(fmt.Sprintf("Stall alert s%d: session %d", a.ID, ses.ID))
	// Both are replies in the session's thread, the alert first.
	var root0 fakeslack.Message
	for _, m := range slack.Messages() {
		if strings.HasPrefix(m.Versions[0].Text, fmt.Sprintf("Session %d ", ses.ID)) {
			root0 = m
		}
	}
	if root0.TS == "" || thread.Params["thread_ts"] != "" {
		t.Fatalf("the session's root message: %+v", thread.Params)
	}
	if alertCall.Params["thread_ts"] != root0.TS {
		t.Fatalf("the stall alert's post: %+v", alertCall.Params)
	}
	if esc.Params["thread_ts"] != root0.TS || esc.Params["channel"] != "C0AGENTS" || alertAt >= escAt {
		t.Fatalf("the escalation's post (call %d, the alert's %d): %+v", escAt, alertAt, esc.Params)
	}
	if text := esc.Params["text"]; !strings.Contains(text, fmt.Sprintf("after 1 nudges (stall alert s%d)", a.ID)) || !strings.Contains(text, "Owner: <@U0ANA>") {
		t.Fatalf("the escalation's text: %q", text)
	}
	// The alert's own message showed the watchdog's nudge, then settled.
	if err := slack.Wait(ctx, "the alert settled", func() bool {
		for _, m := range slack.Messages() {
			if m.ThreadTS == root0.TS && strings.HasPrefix(m.Versions[0].Text, fmt.Sprintf("Stall alert s%d:", a.ID)) {
				nudged := false
				for _, v := range m.Versions {
					nudged = nudged || strings.Contains(string(v.Blocks), "Nudged by the watchdog (1 so far)")
				}
				return nudged && strings.Contains(m.Last().Text, "Escalated after 1 nudges")
			}
		}
		return false
	}); err != nil {
		t.Fatalf("%v: %+v", err, slack.Messages())
	}

	r := <-done
	if r.err != nil {
		t.Fatalf("the run: %v %+v", r.err, r.out)
	}
	if r.out.Nudges < 1 {
		t.Fatalf("the run's outcome: %+v", r.out)
	}
}
