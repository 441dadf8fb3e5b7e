package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/config"
	"github.com/agentinfra/agentinfra/internal/testing/fakeslack"
	"github.com/agentinfra/agentinfra/internal/testing/poll"
	"github.com/agentinfra/agentinfra/review"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision"
	"github.com/agentinfra/agentinfra/workspace"
)

const channel = "C0AGENTS"

var (
	ana = fakeslack.User{ID: "U0ANA", Name: "ana"} // owns the sessions
	bo  = fakeslack.User{ID: "U0BO", Name: "bo"}   // an operator
	eve = fakeslack.User{ID: "U0EVE", Name: "eve"} // linked, but neither
	mal = fakeslack.User{ID: "U0MAL", Name: "mal"} // not linked at all
)

// world is a fake Slack, a store and a running Slack service.
type world struct {
	t    *testing.T
	fake *fakeslack.Server
	st   *store.Store
	sup  *supervision.Service
	svc  *Service
	ctx  context.Context
	stop context.CancelFunc
	// stopSvc stops the service only.
	stopSvc context.CancelFunc
	done    chan error
	conf    Config
	dbDir   string
	// review is the service's Options.Review (newReviewWorld).
	review *review.Service
	// console is the service's Options.Console.
	console config.Console
}

func testConfig() Config {
	return Config{Channel: channel, Users: map[string]string{"ana": ana.ID, "bo": bo.ID, "eve": eve.ID}}
}

func newWorld(t *testing.T, conf Config) *world {
	t.Helper()
	return newReviewWorld(t, conf, nil)
}

// newReviewWorld is newWorld whose service says what a session's task
// left for review (rv).
func newReviewWorld(t *testing.T, conf Config, rv *review.Service) *world {
	t.Helper()
	return newWorldOf(t, conf, rv, nil)
}

// newWorldOf is newWorld whose supervision service says what a session's
// task left for review (rv) and restarts interrupted runs (resume).
func newWorldOf(t *testing.T, conf Config, rv *review.Service, resume func(*workspace.Workspace) supervision.Resumer) *world {
	t.Helper()
	w := newIdleWorld(t, conf, rv, resume)
	w.start()
	// What the test does next comes after the first start (whose cursor is
	// recorded once it caught up): followed live, not caught up.
	poll.Eventually(t, func() bool {
		_, ok, err := w.st.Cursor(w.ctx, store.SurfaceSlack)
		return ok || err != nil
	}, "the first start recorded no cursor")
	return w
}

// newIdleWorld is newWorldOf whose service is not started yet (w.start):
// what exists before a first start.
func newIdleWorld(t *testing.T, conf Config, rv *review.Service, resume func(*workspace.Workspace) supervision.Resumer) *world {
	t.Helper()
	w := &world{t: t, fake: fakeslack.New(t), conf: conf, dbDir: t.TempDir(), review: rv}
	w.ctx, w.stop = context.WithTimeout(context.Background(), 2*poll.Timeout) // a guard against a hang, not a bound: several steps, a loaded machine
	t.Cleanup(w.stop)
	st, err := store.Open(w.ctx, filepath.Join(w.dbDir, store.FileName), store.Options{PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	w.st = st
	ws, err := workspace.New(w.dbDir)
	if err != nil {
		t.Fatal(err)
	}
	ws.Getenv = func(k string) string {
		if k == "AGENTINFRA_CONFIG_DIR" { // the user's allowlist is the test's own
			return w.dbDir
		}
		return ""
	}
	o := supervision.Options{Store: st, Config: supervision.Config{Operators: []string{"@bo"}}, Workspace: ws}
	if resume != nil {
		o.Resume = resume(ws)
	}
	if w.sup, err = supervision.New(o); err != nil {
		t.Fatal(err)
	}
	return w
}

// start runs the service (again, after stopService).
func (w *world) start() {
	w.t.Helper()
	hellos := w.fake.Hellos()
	svc, err := New(Options{Supervision: w.sup, Config: w.conf, Tokens: Tokens{App: fakeslack.AppToken, Bot: fakeslack.BotToken}, APIURL: w.fake.APIURL(), Backoff: 50 * time.Millisecond, Log: testLog(w.t), Review: w.review, Console: w.console})
	if err != nil {
		w.t.Fatal(err)
	}
	w.svc = svc
	ctx, cancel := context.WithCancel(w.ctx)
	done := make(chan error, 1)
	w.done = done
	go func() {
		err := svc.Run(ctx)
		done <- err
		close(done)
	}()
	w.stopSvc = cancel
	// Stopped before the store closes (cleanups run last first).
	w.t.Cleanup(func() {
		cancel()
		<-done
	})
	if err := w.fake.Connected(w.ctx, hellos+1); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) session(mode string) store.Session {
	w.t.Helper()
	ses, err := w.st.CreateSession(w.ctx, store.NewSession{Owner: "ana", Workspace: w.dbDir, Mode: mode, CLI: "claude", Agent: "papi", TaskID: "T-7", Title: "Fix the fetcher"})
	if err != nil {
		w.t.Fatal(err)
	}
	if ses, err = w.st.SetSessionStatus(w.ctx, ses.ID, store.Transition{To: store.SessionActive, By: "ana"}); err != nil {
		w.t.Fatal(err)
	}
	return ses
}

func (w *world) raise(ses store.Session, n store.NewRequest) store.Request {
	w.t.Helper()
	n.SessionID = ses.ID
	if n.Kind == "" {
		n.Kind, n.Tool, n.Command, n.Title, n.Risk = store.KindCommand, "Bash", "touch ok.txt", "Run touch ok.txt", store.RiskLow
	}
	r, err := w.st.RaiseRequest(w.ctx, n)
	if err != nil {
		w.t.Fatal(err)
	}
	return r
}

// message waits for the message whose first version's text has prefix.
func (w *world) message(prefix string) fakeslack.Message {
	w.t.Helper()
	var out fakeslack.Message
	err := w.fake.Wait(w.ctx, "a message "+prefix, func() bool {
		for _, m := range w.fake.Messages() {
			if strings.HasPrefix(m.Versions[0].Text, prefix) {
				out = m
				return true
			}
		}
		return false
	})
	if err != nil {
		w.t.Fatalf("%v; messages: %s", err, w.dump())
	}
	return out
}

// waitMessage waits until the message channel/ts reads cond.
func (w *world) waitMessage(ts, what string, cond func(fakeslack.Message) bool) fakeslack.Message {
	w.t.Helper()
	var out fakeslack.Message
	err := w.fake.Wait(w.ctx, what, func() bool {
		for _, m := range w.fake.Messages() {
			if m.TS == ts && cond(m) {
				out = m
				return true
			}
		}
		return false
	})
	if err != nil {
		w.t.Fatalf("%v; messages: %s", err, w.dump())
	}
	return out
}

// recorded waits until the service has recorded its message of an item.
func (w *world) recorded(item string, id int64) {
	w.t.Helper()
	w.eventually(fmt.Sprintf("the message of %s %d recorded", item, id), func() bool {
		_, err := w.st.PostOf(w.ctx, store.SurfaceSlack, item, id)
		return err == nil
	})
}

// eventually waits until cond holds (the one polling helper).
func (w *world) eventually(what string, cond func() bool) {
	w.t.Helper()
	poll.Eventually(w.t, cond, "waiting for %s", what)
}

func (w *world) dump() string {
	b, _ := json.MarshalIndent(w.fake.Messages(), "", " ")
	return string(b)
}

func (w *world) click(u fakeslack.User, m fakeslack.Message, action string, id int64) {
	w.t.Helper()
	env, err := w.fake.Click(u, m.Channel, m.TS, action, itoa(id))
	if err != nil {
		w.t.Fatal(err)
	}
	if _, err := w.fake.Acked(w.ctx, env); err != nil {
		w.t.Fatal(err)
	}
}

func itoa(id int64) string { return strconv.FormatInt(id, 10) }

func texts(m fakeslack.Message) []string {
	var out []string
	for _, v := range m.Versions {
		out = append(out, v.Text)
	}
	return out
}

func TestApproveByButton(t *testing.T) {
	w := newWorld(t, testConfig())
	ses := w.session(store.ModeRemote)
	root := w.message("Session ")
	if root.Channel != channel || root.ThreadTS != "" {
		t.Fatalf("the session's thread: %+v", root)
	}
	r := w.raise(ses, store.NewRequest{})
	m := w.message("Request ")
	if m.ThreadTS != root.TS {
		t.Fatalf("the request is not in the session's thread: %+v (thread %s)", m, root.TS)
	}
	if !strings.Contains(string(m.Versions[0].Blocks), `"action_id":"approve"`) || !strings.Contains(string(m.Versions[0].Blocks), "touch ok.txt") {
		t.Fatalf("the request's blocks: %s", m.Versions[0].Blocks)
	}
	w.click(bo, m, actionApprove, r.ID)
	m = w.waitMessage(m.TS, "the outcome", func(m fakeslack.Message) bool { return strings.Contains(m.Last().Text, "Approved") })
	got := texts(m)
	if len(got) != 3 || !strings.Contains(got[1], "Processing…") || !strings.Contains(got[2], "Approved by <@U0BO>") {
		t.Fatalf("the message's versions: %q", got)
	}
	if strings.Contains(string(m.Last().Blocks), `"action_id"`) {
		t.Errorf("the decided request still has buttons: %s", m.Last().Blocks)
	}
	dec, err := w.st.Request(w.ctx, r.ID)
	if err != nil || dec.Status != store.StatusApproved || dec.Surface != store.SurfaceSlack || dec.DecidedBy != "bo" {
		t.Fatalf("the stored decision: %+v %v", dec, err)
	}
	// A second answer from a terminal is told it lost to Slack.
	_, err = w.st.Decide(w.ctx, store.Decision{RequestID: r.ID, Approve: true, By: "ana", Surface: store.SurfaceTerminal})
	var lost *store.DecidedError
	if !errors.As(err, &lost) || !strings.Contains(err.Error(), "already approved via slack by @bo") {
		t.Fatalf("the terminal's answer: %v", err)
	}
}

type tlogWriter struct{ t *testing.T }

func (l tlogWriter) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func testLog(t *testing.T) *slog.Logger { return slog.New(slog.NewTextHandler(tlogWriter{t}, nil)) }
