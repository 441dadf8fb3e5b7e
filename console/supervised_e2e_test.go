package console_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agentinfra/agentinfra/agentcli"
	"github.com/agentinfra/agentinfra/agentrun"
	"github.com/agentinfra/agentinfra/bridge"
	"github.com/agentinfra/agentinfra/console"
	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/internal/testing/fakemodel"
	"github.com/agentinfra/agentinfra/internal/testing/testbin"
	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/store"
)

// fileLog is the session log of these tests: the bridge's events kept as a
// run log (agentrun's JSONL) per session, followed the way the fleet
// follows its runs' logs. (The supervised-run wiring of dispatch and the
// fleet, another issue's, keeps them as the run's log.)
type fileLog struct {
	dir string
	st  *store.Store
}

func (l fileLog) path(id int64) string {
	return filepath.Join(l.dir, fmt.Sprintf("session-%d.jsonl", id))
}

func (l fileLog) Follow(ctx context.Context, s store.Session, fn func(events.RunItem) error) error {
	live := func() bool {
		cur, err := l.st.Session(context.Background(), s.ID)
		return err == nil && cur.Live()
	}
	return agentrun.FollowLog(ctx, l.path(s.ID), live, fn)
}

func newSupervisedWorld(t *testing.T) (*world, fileLog) {
	var fl fileLog
	fl.dir = t.TempDir()
	w := newWorld(t, worldOpts{opts: func(o *console.Options) { o.SessionLog = &fl }})
	fl.st = w.st
	return w, fl
}

// claudeRun is the real claude CLI under supervision against a fake model
// that asks to run `touch ok.txt`, then says done.
type claudeRun struct {
	fake *fakemodel.Server
	ses  store.Session
	done chan error
}

func (w *world) startClaude(t *testing.T, fl fileLog) *claudeRun {
	t.Helper()
	fake := fakemodel.NewClaudeScript(t, fakemodel.ShellOnce("touch", "touch ok.txt", "done"))
	cli := fakemodel.Claude(t, fake.URL)
	ses := w.activeSession(t, "claude", "", "a1b2c3")
	logw, err := agentrun.Files{LogPath: fl.path(ses.ID)}.Log(nil)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seq := int64(0)
	r := &claudeRun{fake: fake, ses: ses, done: make(chan error, 1)}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), fakemodel.Timeout)
		defer cancel()
		_, err := agentcli.RunSupervised(ctx, bridge.Request{CLI: "claude", Binary: cli.Binary, Model: cli.Model, Dir: w.ws.Root, Env: cli.Env, CleanEnv: true,
			ExtraArgs: cli.ExtraArgs, Prompt: "Please touch ok.txt"},
			bridge.Options{Store: w.st, Session: ses, OnEvent: func(ev runner.Event) {
				mu.Lock()
				defer mu.Unlock()
				seq++
				logw.Append(events.RunItem{Seq: seq, Time: time.Now(), Kind: ev.Kind, Tool: ev.Tool, Text: ev.Text})
			}})
		logw.Close()
		r.done <- err
	}()
	return r
}

func (r *claudeRun) wait(t *testing.T) {
	t.Helper()
	select {
	case err := <-r.done:
		if err != nil {
			t.Fatalf("the supervised claude run: %v", err)
		}
	case <-time.After(fakemodel.Timeout + 10*time.Second):
		t.Fatal("the supervised claude run did not end")
	}
}

func (w *world) okExists() bool {
	_, err := os.Stat(filepath.Join(w.ws.Root, "ok.txt"))
	return err == nil
}

// pendingCard waits until the open page shows a pending request without a
// reload, and returns its ID.
func pendingCard(t *testing.T, ctx context.Context) int64 {
	t.Helper()
	run(t, ctx, "a pending request appears on the open page", visible(`article.req:not(.decided)`))
	key := value(t, ctx, "its ID", chromedp.AttributeValue(chromedp.CSS(`article.req:not(.decided)`), "data-key")).Value
	text := textOf(t, ctx, `article.req:not(.decided)`)
	if !strings.Contains(text, "touch ok.txt") {
		t.Fatalf("the card does not show the command: %q", text)
	}
	id, err := strconv.ParseInt(key, 10, 64)
	if err != nil {
		t.Fatalf("card key %q", key)
	}
	return id
}

func TestBrowserApproveMakesTheCLIProceed(t *testing.T) {
	t.Parallel()
	ctx := tab(t)
	w, fl := newSupervisedWorld(t)
	w.open(t, ctx, "/inbox") // open before the request exists: it must arrive live
	before := evalJS[int](t, ctx, `document.querySelectorAll("article.req").length`)
	r := w.startClaude(t, fl)
	sesTab, cancel := chromedp.NewContext(ctx)
	defer cancel()
	w.openIn(t, sesTab, fmt.Sprintf("/sessions/%d", r.ses.ID))

	id := pendingCard(t, ctx)
	if before != 0 {
		t.Fatalf("the page showed %d cards before the request", before)
	}
	if w.okExists() {
		t.Fatal("ok.txt exists before the approval")
	}
	run(t, ctx, "click approve", click(fmt.Sprintf(`#req-%d .decide form:not(.always) button`, id)))
	r.wait(t)
	if !w.okExists() {
		t.Fatal("approved in the page, but the CLI did not create ok.txt")
	}
	got, err := w.st.Request(context.Background(), id)
	if err != nil || got.Status != store.StatusApproved || got.Surface != store.SurfaceWeb || got.DecidedBy != "ana" {
		t.Fatalf("request: %+v %v", got, err)
	}
	run(t, ctx, "the card says who decided", visible(fmt.Sprintf(`#req-%d .verdict`, id)))
	verdict := textOf(t, ctx, fmt.Sprintf(`#req-%d .verdict`, id))
	if !strings.Contains(verdict, "via web by @ana") || !strings.Contains(verdict, "approved") {
		t.Fatalf("verdict %q", verdict)
	}
	// The session's page followed the run's log live.
	run(t, sesTab, "the session's live log", visible(`#log li.li-approval`), visible(`#log li.li-result`))
	logText := textOf(t, sesTab, `#log`)
	if !strings.Contains(logText, "touch ok.txt") {
		t.Fatalf("the live log does not show the request: %q", logText)
	}
	// and its progress line, written from the run's events.
	waitText(t, sesTab, `[data-key="panel"] .facts`, "1 tool call, 1 turn done · “done”")
}

func TestBrowserRejectWithAReasonReachesTheModel(t *testing.T) {
	t.Parallel()
	ctx := tab(t)
	w, fl := newSupervisedWorld(t)
	w.open(t, ctx, "/inbox")
	r := w.startClaude(t, fl)
	id := pendingCard(t, ctx)
	const reason = "NO-TOUCHING-use-a-temp-dir"
	run(t, ctx, "reject with a reason",
		chromedp.SendKeys(chromedp.CSS(fmt.Sprintf(`#reason-%d`, id)), reason),
		click(fmt.Sprintf(`#req-%d form.reject button`, id)))
	r.wait(t)
	if w.okExists() {
		t.Fatal("rejected, but ok.txt exists")
	}
	var bodies strings.Builder
	for _, s := range r.fake.Requests("/v1/messages") {
		bodies.Write(s.Body)
	}
	if !strings.Contains(bodies.String(), reason) {
		t.Fatal("the reason typed in the page never reached the model")
	}
	got, _ := w.st.Request(context.Background(), id)
	if got.Status != store.StatusRejected || got.Reason != reason || got.Surface != store.SurfaceWeb {
		t.Fatalf("request: %+v", got)
	}
}

// agentinfra is the real binary, with agentinfra-full beside it to run
// what it hands over, built once per source tree (package testbin).
func agentinfra(t *testing.T) string { return testbin.Path(t, testbin.Agentinfra) }

func TestBrowserShowsADecisionFromTheTerminal(t *testing.T) {
	t.Parallel()
	bin := agentinfra(t)
	ctx := tab(t)
	w, fl := newSupervisedWorld(t)
	w.open(t, ctx, "/inbox")
	r := w.startClaude(t, fl)
	id := pendingCard(t, ctx)
	cmd := exec.Command(bin, "--root", w.ws.Root, "approve", strconv.FormatInt(id, 10))
	cmd.Env = append(os.Environ(), "AGENTINFRA_USER=ana")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("agentinfra approve: %v\n%s", err, out)
	}
	run(t, ctx, "the page shows the terminal's decision in place of the buttons", visible(fmt.Sprintf(`#req-%d .verdict`, id)))
	verdict := textOf(t, ctx, fmt.Sprintf(`#req-%d .verdict`, id))
	if !strings.Contains(verdict, "Decided via terminal by @ana") || !strings.Contains(verdict, "approved") {
		t.Fatalf("verdict %q", verdict)
	}
	buttons := evalJS[int](t, ctx, fmt.Sprintf(`document.querySelectorAll("#req-%d .decide button").length`, id))
	if buttons != 0 {
		t.Fatalf("the decided card still has %d decision buttons", buttons)
	}
	r.wait(t)
	if !w.okExists() {
		t.Fatal("approved from the terminal, but ok.txt does not exist")
	}
}

// openIn signs another tab of the same browser in (the cookie is shared)
// and opens path.
func (w *world) openIn(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	run(t, ctx, "open "+path, chromedp.Navigate(w.base+path), visible(`#conn[data-state="live"]`))
}
