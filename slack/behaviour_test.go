package slack

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/internal/testing/fakeslack"
	"github.com/agentinfra/agentinfra/internal/testing/golden"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision"
	"github.com/agentinfra/agentinfra/workspace"
)

func (w *world) ephemeral(user string, contains string) fakeslack.Ephemeral {
	w.t.Helper()
	var out fakeslack.Ephemeral
	err := w.fake.Wait(w.ctx, "an ephemeral to "+user, func() bool {
		for _, e := range w.fake.Ephemerals() {
			if e.User == user && strings.Contains(e.Text, contains) {
				out = e
				return true
			}
		}
		return false
	})
	if err != nil {
		w.t.Fatalf("%v; ephemerals: %+v", err, w.fake.Ephemerals())
	}
	return out
}

func (w *world) audit(action string) []store.Event {
	evs, err := w.st.Audit(w.ctx, 0)
	if err != nil {
		w.t.Fatal(err)
	}
	var out []store.Event
	for _, e := range evs {
		if e.Action == action {
			out = append(out, e)
		}
	}
	return out
}

func TestRejectAsksForTheReasonInTheThread(t *testing.T) {
	w := newWorld(t, testConfig())
	ses := w.session(store.ModeHybrid)
	root := w.message("Session ")
	r := w.raise(ses, store.NewRequest{})
	m := w.message("Request ")
	w.click(ana, m, actionReject, r.ID) // the owner may decide her own session's requests
	q := w.message("<@U0ANA> why reject request")
	if q.ThreadTS != root.TS || !strings.Contains(q.Last().Text, "<@"+fakeslack.BotUserID+">") {
		t.Fatalf("the question is not a threaded reply mentioning the app: %+v", q)
	}
	if calls := w.fake.Calls("views.open"); len(calls) != 0 {
		t.Fatalf("a modal was opened from a thread: %+v", calls)
	}
	if cur, _ := w.st.Request(w.ctx, r.ID); cur.Status != store.StatusPending {
		t.Fatalf("decided before the reason came: %+v", cur)
	}
	env, err := w.fake.Mention(ana, channel, root.TS, "<@"+fakeslack.BotUserID+"> use a temporary folder, not the repo")
	if err != nil {
		t.Fatal(err)
	}
	w.fake.Acked(w.ctx, env)
	m = w.waitMessage(m.TS, "the rejection", func(m fakeslack.Message) bool { return strings.Contains(m.Last().Text, "Rejected") })
	got := texts(m)
	if !strings.Contains(got[len(got)-2], "Processing…") || !strings.Contains(got[len(got)-1], "Rejected by <@U0ANA>: use a temporary folder, not the repo") {
		t.Fatalf("versions: %q", got)
	}
	dec, _ := w.st.Request(w.ctx, r.ID)
	if dec.Status != store.StatusRejected || dec.Reason != "use a temporary folder, not the repo" || dec.Surface != store.SurfaceSlack {
		t.Fatalf("stored: %+v", dec)
	}
}

func TestClicksOfPeopleWhoMayNotActAreRefusedAndAudited(t *testing.T) {
	w := newWorld(t, testConfig())
	ses := w.session(store.ModeRemote)
	r := w.raise(ses, store.NewRequest{})
	m := w.message("Request ")
	w.click(eve, m, actionApprove, r.ID)
	e := w.ephemeral(eve.ID, "Not allowed")
	if !strings.Contains(e.Text, "@eve may not decide request") || e.Channel != channel {
		t.Fatalf("eve's refusal: %+v", e)
	}
	w.click(mal, m, actionReject, r.ID)
	e = w.ephemeral(mal.ID, "Not allowed")
	if !strings.Contains(e.Text, "slack.users") {
		t.Fatalf("an unlinked member's refusal does not say how to link: %+v", e)
	}
	refused := w.audit("slack_refused")
	if len(refused) != 2 || refused[0].Actor != "eve" || refused[1].Actor != "slack:U0MAL" || refused[0].RequestID != r.ID || refused[0].Surface != store.SurfaceSlack {
		t.Fatalf("the audit log: %+v", refused)
	}
	if cur, _ := w.st.Request(w.ctx, r.ID); cur.Status != store.StatusPending {
		t.Fatalf("a refused click decided: %+v", cur)
	}
	for _, msg := range w.fake.Messages() {
		if msg.TS == m.TS && len(msg.Versions) != 1 {
			t.Fatalf("a refused click changed the message: %q", texts(msg))
		}
	}
}

func TestLocalSessionsPostNothing(t *testing.T) {
	w := newWorld(t, testConfig())
	local := w.session(store.ModeLocal)
	r := w.raise(local, store.NewRequest{})
	if _, err := w.st.Decide(w.ctx, store.Decision{RequestID: r.ID, Approve: true, By: "ana", Surface: store.SurfaceTerminal}); err != nil {
		t.Fatal(err)
	}
	w.st.SetSessionStatus(w.ctx, local.ID, store.Transition{To: store.SessionTerminated, By: "ana", Reason: "done"})
	// A remote session after it: once its thread is there, the feed has
	// gone past everything the local one did.
	remote := w.session(store.ModeRemote)
	w.message(fmt.Sprintf("Session %d ", remote.ID))
	for _, c := range w.fake.Calls("") {
		if strings.Contains(c.Params["text"], fmt.Sprintf("Session %d ", local.ID)) || strings.Contains(c.Params["text"], fmt.Sprintf("Request %d ", r.ID)) {
			t.Fatalf("the local session posted: %+v", c)
		}
	}
	if n := len(w.fake.Calls("chat.postMessage")); n != 1 {
		t.Fatalf("%d messages posted, want only the remote session's thread", n)
	}
}

func TestDoubleClickDecidesOnce(t *testing.T) {
	w := newWorld(t, testConfig())
	ses := w.session(store.ModeRemote)
	r := w.raise(ses, store.NewRequest{})
	m := w.message("Request ")
	e1, _ := w.fake.Click(bo, m.Channel, m.TS, actionApprove, itoa(r.ID))
	e2, _ := w.fake.Click(bo, m.Channel, m.TS, actionApprove, itoa(r.ID))
	w.fake.Acked(w.ctx, e1)
	w.fake.Acked(w.ctx, e2)
	w.ephemeral(bo.ID, "already approved via slack by @bo")
	if got := w.audit("request_approved"); len(got) != 1 {
		t.Fatalf("decided %d times: %+v", len(got), got)
	}
	m = w.waitMessage(m.TS, "the outcome", func(m fakeslack.Message) bool { return strings.Contains(m.Last().Text, "Approved by <@U0BO>") })
	if n := strings.Count(strings.Join(texts(m), "\n"), "Processing…"); n != 1 {
		t.Fatalf("the message went through Processing… %d times: %q", n, texts(m))
	}
}

func TestDecidedElsewhereUpdatesTheMessage(t *testing.T) {
	w := newWorld(t, testConfig())
	ses := w.session(store.ModeRemote)
	r := w.raise(ses, store.NewRequest{})
	m := w.message("Request ")
	if _, err := w.st.Decide(w.ctx, store.Decision{RequestID: r.ID, Approve: true, By: "ana", Surface: store.SurfaceTerminal}); err != nil {
		t.Fatal(err)
	}
	m = w.waitMessage(m.TS, "the terminal's decision", func(m fakeslack.Message) bool {
		return strings.Contains(m.Last().Text, "Approved by <@U0ANA> via terminal")
	})
	w.click(bo, m, actionApprove, r.ID)
	w.ephemeral(bo.ID, "already approved via terminal by @ana")
	// An expired request says so.
	r2 := w.raise(ses, store.NewRequest{Timeout: 200 * time.Millisecond})
	m2 := w.message(fmt.Sprintf("Request %d ", r2.ID))
	if _, _, err := w.st.Expire(w.ctx, r2.ID); err != nil {
		t.Fatal(err)
	}
	w.waitMessage(m2.TS, "the expiry", func(m fakeslack.Message) bool {
		return strings.Contains(m.Last().Text, "Expired: timed out after 200ms")
	})
}

func TestOutcomeOfAClickThatLost(t *testing.T) {
	now := time.Now()
	r := store.Request{ID: 3, Status: store.StatusApproved, Surface: store.SurfaceTerminal, DecidedBy: "ana", DecidedAt: &now}
	if got := outcome(testConfig(), r, true); got != ":information_source: Already decided via terminal by <@U0ANA> (approved)" {
		t.Fatalf("lost click: %q", got)
	}
	if got := outcome(testConfig(), r, false); got != ":white_check_mark: Approved by <@U0ANA> via terminal" {
		t.Fatalf("decided elsewhere: %q", got)
	}
}

func diffOf(n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "--- a/fetch.go\n+++ b/fetch.go\n@@ -1,%d +1,%d @@\n", n, n)
	for i := range n - 3 {
		fmt.Fprintf(&b, "+line %d\n", i)
	}
	return b.String()
}

func TestDiffInlineUpToTheLimitElseUploaded(t *testing.T) {
	w := newWorld(t, testConfig())
	ses := w.session(store.ModeRemote)
	root := w.message("Session ")
	short := diffOf(20)
	r := w.raise(ses, store.NewRequest{Kind: store.KindEdit, Tool: "Edit", File: "fetch.go", Diff: short, Title: "Edit fetch.go", Risk: store.RiskLow})
	m := w.message(fmt.Sprintf("Request %d ", r.ID))
	if !strings.Contains(string(m.Versions[0].Blocks), "+line 16") {
		t.Fatalf("a 20-line diff is not inline: %s", m.Versions[0].Blocks)
	}
	if _, err := w.st.Decide(w.ctx, store.Decision{RequestID: r.ID, Approve: true, By: "ana", Surface: store.SurfaceTerminal}); err != nil {
		t.Fatal(err)
	}
	long := diffOf(60)
	r2 := w.raise(ses, store.NewRequest{Kind: store.KindEdit, Tool: "Edit", File: "fetch.go", Diff: long, Title: "Edit fetch.go again", Risk: store.RiskLow})
	m2 := w.message(fmt.Sprintf("Request %d ", r2.ID))
	if strings.Contains(string(m2.Versions[0].Blocks), "+line 40") || !strings.Contains(string(m2.Versions[0].Blocks), "attached below") {
		t.Fatalf("a 60-line diff is inline: %s", m2.Versions[0].Blocks)
	}
	var up fakeslack.Upload
	w.fake.Wait(w.ctx, "the upload", func() bool {
		for _, u := range w.fake.Uploads() {
			if u.Completed {
				up = u
				return true
			}
		}
		return false
	})
	if up.Name != fmt.Sprintf("request-%d.diff", r2.ID) || string(up.Content) != long || up.Channel != channel || up.ThreadTS != root.TS {
		t.Fatalf("the upload: %+v", up)
	}
	if len(w.fake.Calls("files.getUploadURLExternal")) != 1 || len(w.fake.Calls("files.completeUploadExternal")) != 1 {
		t.Fatalf("not the two-step upload: %+v", w.fake.Calls(""))
	}
}

func TestRateLimitIsHonoured(t *testing.T) {
	w := newWorld(t, testConfig())
	w.fake.RateLimit("chat.postMessage", 1)
	ses := w.session(store.ModeRemote)
	r := w.raise(ses, store.NewRequest{})
	w.message(fmt.Sprintf("Request %d ", r.ID))
	calls := w.fake.Calls("chat.postMessage")
	if len(calls) != 3 || calls[0].Status != 429 || calls[1].Status != 200 {
		t.Fatalf("calls: %+v", calls)
	}
	if gap := calls[1].At.Sub(calls[0].At); gap < time.Second {
		t.Fatalf("retried %v after a 429 with Retry-After: 1", gap)
	}
	if w.svc.Limited() != 1 {
		t.Fatalf("limited: %d", w.svc.Limited())
	}
}

func TestReconnectsAfterADroppedConnection(t *testing.T) {
	w := newWorld(t, testConfig())
	ses := w.session(store.ModeRemote)
	r := w.raise(ses, store.NewRequest{})
	m := w.message("Request ")
	w.fake.Drop()
	if err := w.fake.Connected(w.ctx, 2); err != nil {
		t.Fatal(err)
	}
	if w.fake.Opens() < 2 {
		t.Fatalf("reconnected without apps.connections.open: %d", w.fake.Opens())
	}
	w.click(bo, m, actionApprove, r.ID)
	w.waitMessage(m.TS, "the outcome", func(m fakeslack.Message) bool { return strings.Contains(m.Last().Text, "Approved by <@U0BO>") })
}

func TestRestartNeitherPostsTwiceNorMisses(t *testing.T) {
	w := newWorld(t, testConfig())
	ses := w.session(store.ModeRemote)
	r := w.raise(ses, store.NewRequest{})
	m := w.message("Request ")
	w.stopSvc()
	if err := <-w.done; err != nil {
		t.Fatalf("the service's end: %v", err)
	}
	downThenBack(t, w, ses, r, m)
}

// TestAStopDuringTheFirstCatchUpLeavesNothingBehind: a first start stopped
// while it posts what waited before it finishes that catch-up and follows
// the audit log from there, so what is decided while it is down is shown
// after a restart, and nothing is posted twice.
func TestAStopDuringTheFirstCatchUpLeavesNothingBehind(t *testing.T) {
	w := newIdleWorld(t, testConfig(), nil, nil)
	ses := w.session(store.ModeRemote)
	r := w.raise(ses, store.NewRequest{})
	release := w.fake.Hold("chat.postMessage")
	w.start()
	if err := w.fake.Holding(w.ctx, "chat.postMessage", 1); err != nil {
		t.Fatal(err)
	}
	w.stopSvc() // while the session's thread is being started
	release()
	if err := <-w.done; err != nil {
		t.Fatalf("the service's end: %v", err)
	}
	m := w.message("Request ")
	downThenBack(t, w, ses, r, m)
}

// TestAFirstStartCutShortBringsItsMessagesUpToDate: a first start that
// posted what waited but died before it recorded where it was (a crash)
// is a first start again, which shows the outcome of what it had posted
// and was decided since.
func TestAFirstStartCutShortBringsItsMessagesUpToDate(t *testing.T) {
	w := newIdleWorld(t, testConfig(), nil, nil)
	ses := w.session(store.ModeRemote)
	r := w.raise(ses, store.NewRequest{})
	w.start()
	m := w.message("Request ")
	w.stopSvc()
	if err := <-w.done; err != nil {
		t.Fatalf("the service's end: %v", err)
	}
	// What a crash before the cursor was written leaves: posts, no cursor.
	db, err := sql.Open("sqlite", filepath.Join(w.dbDir, store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if res, err := db.Exec("DELETE FROM surface_cursors WHERE surface = ?", store.SurfaceSlack); err != nil {
		t.Fatal(err)
	} else if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("the first start recorded no cursor (%d rows)", n)
	}
	downThenBack(t, w, ses, r, m)
}

// downThenBack decides r (whose message is m) while the service is down,
// raises another request, restarts the service and checks that r's
// message shows the outcome, the other is posted, and nothing twice.
func downThenBack(t *testing.T, w *world, ses store.Session, r store.Request, m fakeslack.Message) {
	t.Helper()
	if _, err := w.st.Decide(w.ctx, store.Decision{RequestID: r.ID, Approve: false, By: "ana", Surface: store.SurfaceTerminal, Reason: "no"}); err != nil {
		t.Fatal(err)
	}
	r2 := w.raise(ses, store.NewRequest{})
	w.start()
	w.waitMessage(m.TS, "the decision taken while down", func(m fakeslack.Message) bool {
		return strings.Contains(m.Last().Text, "Rejected by <@U0ANA> via terminal: no")
	})
	w.message(fmt.Sprintf("Request %d ", r2.ID))
	var roots, firsts int
	for _, msg := range w.fake.Messages() {
		if strings.HasPrefix(msg.Versions[0].Text, "Session ") {
			roots++
		}
		if strings.HasPrefix(msg.Versions[0].Text, fmt.Sprintf("Request %d ", r.ID)) {
			firsts++
		}
	}
	if roots != 1 || firsts != 1 {
		t.Fatalf("posted twice after a restart: %d threads, %d messages of request %d", roots, firsts, r.ID)
	}
}

func TestTheEndOfTheRunIsPostedWithItsOutcome(t *testing.T) {
	w := newWorld(t, testConfig())
	ses := w.session(store.ModeRemote)
	root := w.message("Session ")
	w.st.SetSessionStatus(w.ctx, ses.ID, store.Transition{To: store.SessionTerminated, By: "agentinfra", Reason: "the run finished: REVIEW"})
	end := w.message(fmt.Sprintf("Session %d terminated", ses.ID))
	if end.ThreadTS != root.TS || !strings.Contains(end.Last().Text, "the run finished: REVIEW") {
		t.Fatalf("the end: %+v", end)
	}
	w.waitMessage(root.TS, "the root's end", func(m fakeslack.Message) bool { return strings.Contains(m.Last().Text, "terminated") })
}

// TestBlockKitGolden pins the Block Kit of each message.
func TestBlockKitGolden(t *testing.T) {
	w := newWorld(t, testConfig())
	ses := w.session(store.ModeRemote)
	r := w.raise(ses, store.NewRequest{Kind: store.KindEdit, Tool: "Edit", File: "fetch.go", Diff: diffOf(6), Title: "Edit fetch.go", Risk: store.RiskHigh})
	m := w.message("Request ")
	w.click(bo, m, actionApprove, r.ID)
	m = w.waitMessage(m.TS, "the outcome", func(m fakeslack.Message) bool { return strings.Contains(m.Last().Text, "Approved") })
	w.st.SetSessionStatus(w.ctx, ses.ID, store.Transition{To: store.SessionTerminated, By: "agentinfra", Reason: "the run finished: REVIEW"})
	end := w.message(fmt.Sprintf("Session %d terminated", ses.ID))
	root := w.message("Session ")
	pretty := func(b json.RawMessage) string {
		var out bytes.Buffer
		json.Indent(&out, b, "", "  ")
		return out.String() + "\n"
	}
	golden.Check(t, "testdata/session_started.json", pretty(root.Versions[0].Blocks))
	golden.Check(t, "testdata/request.json", pretty(m.Versions[0].Blocks))
	golden.Check(t, "testdata/request_processing.json", pretty(m.Versions[1].Blocks))
	golden.Check(t, "testdata/request_approved.json", pretty(m.Versions[2].Blocks))
	golden.Check(t, "testdata/session_ended.json", pretty(end.Versions[0].Blocks))
}

func TestASessionsOwnChannel(t *testing.T) {
	w := newWorld(t, testConfig())
	ses, err := w.st.CreateSession(w.ctx, store.NewSession{Owner: "ana", Mode: store.ModeRemote, CLI: "codex", Channel: "C0OWN"})
	if err != nil {
		t.Fatal(err)
	}
	w.st.SetSessionStatus(w.ctx, ses.ID, store.Transition{To: store.SessionActive, By: "ana"})
	if m := w.message("Session "); m.Channel != "C0OWN" {
		t.Fatalf("posted in %s, want the session's C0OWN", m.Channel)
	}
}

func TestRefusedTokensStopWithAClearError(t *testing.T) {
	fake := fakeslack.New(t)
	dir := t.TempDir()
	st, err := store.Open(t.Context(), dir+"/a.db", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ws, _ := workspace.New(dir)
	sup, err := supervision.New(supervision.Options{Store: st, Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tokens Tokens
		want   string
	}{
		{Tokens{App: "xapp-wrong", Bot: fakeslack.BotToken}, EnvAppToken},
		{Tokens{App: fakeslack.AppToken, Bot: "xoxb-wrong"}, EnvBotToken},
	} {
		svc, err := New(Options{Supervision: sup, Config: testConfig(), Tokens: c.tokens, APIURL: fake.APIURL()})
		if err != nil {
			t.Fatal(err)
		}
		err = svc.Run(t.Context())
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "invalid_auth") {
			t.Fatalf("%+v: %v", c.tokens, err)
		}
	}
}
