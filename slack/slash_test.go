package slack

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/internal/testing/fakeslack"
	"github.com/agentinfra/agentinfra/store"
)

// slash sends /agentinfra text from u and returns the text of the answer
// posted to its response_url (what Slack shows the caller, only).
func (w *world) slash(u fakeslack.User, text string) string {
	w.t.Helper()
	env, err := w.fake.Slash(u, channel, "/agentinfra", text)
	if err != nil {
		w.t.Fatal(err)
	}
	if _, err := w.fake.Acked(w.ctx, env); err != nil {
		w.t.Fatal(err)
	}
	raw, err := w.fake.Responded(w.ctx, env)
	if err != nil {
		w.t.Fatal(err)
	}
	var p struct {
		Text         string
		ResponseType string `json:"response_type"`
	}
	json.Unmarshal(raw, &p)
	if p.ResponseType != "ephemeral" {
		w.t.Fatalf("the answer to /agentinfra %s is not ephemeral: %s", text, raw)
	}
	return p.Text
}

func TestSlashCommand(t *testing.T) {
	w := newWorld(t, testConfig())
	// The workspace's registry: `hello` prints a line.
	os.MkdirAll(filepath.Join(w.dbDir, ".agent"), 0o755)
	os.WriteFile(filepath.Join(w.dbDir, ".agent", "policy.yaml"), []byte("commands:\n  hello: echo hello from the workspace\n"), 0o644)
	remote := w.session(store.ModeRemote)
	local := w.session(store.ModeLocal)
	root := w.message("Session ")
	r := w.raise(remote, store.NewRequest{})
	w.message("Request ")

	got := w.slash(bo, "sessions")
	if !strings.Contains(got, fmt.Sprintf("*%d* active", remote.ID)) || strings.Contains(got, fmt.Sprintf("*%d* ", local.ID)) {
		t.Fatalf("sessions: %q", got)
	}
	if got := w.slash(bo, "pending"); !strings.Contains(got, fmt.Sprintf("request *%d*", r.ID)) {
		t.Fatalf("pending: %q", got)
	}
	if got := w.slash(eve, fmt.Sprintf("pause %d", remote.ID)); !strings.Contains(got, "Not allowed") {
		t.Fatalf("eve paused: %q", got)
	}
	if got := w.slash(mal, "sessions"); !strings.Contains(got, "slack.users") {
		t.Fatalf("an unlinked member listed: %q", got)
	}
	if n := len(w.audit("slack_refused")); n != 2 {
		t.Fatalf("%d refusals audited, want 2", n)
	}
	if got := w.slash(bo, fmt.Sprintf("pause %d", remote.ID)); !strings.Contains(got, "paused") {
		t.Fatalf("pause: %q", got)
	}
	if ses, _ := w.st.Session(w.ctx, remote.ID); ses.Status != store.SessionPaused {
		t.Fatalf("not paused: %+v", ses)
	}
	w.slash(ana, fmt.Sprintf("resume %d", remote.ID))
	if got := w.slash(bo, fmt.Sprintf("run %d rm-rf", remote.ID)); !strings.Contains(got, "not in the command registry") || !strings.Contains(got, "hello") {
		t.Fatalf("an unregistered command: %q", got)
	}
	if got := w.slash(bo, fmt.Sprintf("run %d hello", remote.ID)); !strings.Contains(got, "Running `hello`") {
		t.Fatalf("run: %q", got)
	}
	out := w.message("`hello` (echo hello from the workspace)")
	if out.ThreadTS != root.TS || !strings.Contains(out.Last().Text, "```hello from the workspace```") || !strings.Contains(out.Last().Text, "exit 0") {
		t.Fatalf("the output in the thread: %+v", out)
	}
	if got := w.slash(bo, fmt.Sprintf("pause %d", local.ID)); !strings.Contains(got, "no remote session") {
		t.Fatalf("a local session was reached: %q", got)
	}
}

func TestTail(t *testing.T) {
	var b strings.Builder
	for i := range 100 {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	got := tail(b.String(), 30)
	if !strings.HasPrefix(got, "… (70 lines cut)\nline 70\n") || !strings.HasSuffix(got, "line 99") {
		t.Fatalf("%q", got)
	}
}

// The message of `steer` keeps every character, whatever the spaces
// around the verb and the ID.
func TestSlashSteerKeepsEveryCharacter(t *testing.T) {
	w := newWorld(t, testConfig())
	ses := w.session(store.ModeRemote)
	w.message("Session ")
	for _, text := range []string{"  steer %d use the staging database", "steer   %d\tuse  the  staging\ndatabase  ", "STEER #%d use it"} {
		if got := w.slash(bo, fmt.Sprintf(text, ses.ID)); !strings.Contains(got, "Queued") {
			t.Fatalf("%q: %q", text, got)
		}
	}
	q, _ := w.st.QueuedSteering(w.ctx, ses.ID)
	var got []string
	for _, m := range q {
		got = append(got, m.Text)
	}
	if want := []string{"use the staging database", "use  the  staging\ndatabase  ", "use it"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("steering %q, want %q", got, want)
	}
}

// Listing is an owner's or an operator's: an operator sees every remote
// session and pending request, an owner their own, another linked member
// none (titles are the owner's business).
func TestSlashListingsShowWhatTheCallerMayActOn(t *testing.T) {
	w := newWorld(t, testConfig())
	anas := w.session(store.ModeRemote)
	bos, err := w.st.CreateSession(w.ctx, store.NewSession{Owner: "bo", Workspace: w.dbDir, Mode: store.ModeRemote, CLI: "codex", Title: "bo's secret"})
	if err != nil {
		t.Fatal(err)
	}
	w.st.SetSessionStatus(w.ctx, bos.ID, store.Transition{To: store.SessionActive, By: "bo"})
	ra := w.raise(anas, store.NewRequest{})
	rb := w.raise(bos, store.NewRequest{})
	w.message(fmt.Sprintf("Request %d ", rb.ID))
	for _, c := range []struct {
		u         fakeslack.User
		verb      string
		has, hasn []string
	}{
		{bo, "sessions", []string{fmt.Sprintf("*%d*", anas.ID), fmt.Sprintf("*%d*", bos.ID)}, nil},
		{ana, "sessions", []string{fmt.Sprintf("*%d*", anas.ID)}, []string{fmt.Sprintf("*%d*", bos.ID)}},
		{eve, "sessions", []string{"No live remote session of yours"}, []string{fmt.Sprintf("*%d*", anas.ID)}},
		{bo, "pending", []string{fmt.Sprintf("request *%d*", ra.ID), fmt.Sprintf("request *%d*", rb.ID)}, nil},
		{ana, "pending", []string{fmt.Sprintf("request *%d*", ra.ID)}, []string{fmt.Sprintf("request *%d*", rb.ID)}},
		{eve, "pending", []string{"No request of your sessions"}, []string{"request *"}},
	} {
		got := w.slash(c.u, c.verb)
		for _, s := range c.has {
			if !strings.Contains(got, s) {
				t.Errorf("%s %s: no %q in %q", c.u.Name, c.verb, s, got)
			}
		}
		for _, s := range c.hasn {
			if strings.Contains(got, s) {
				t.Errorf("%s %s: %q in %q", c.u.Name, c.verb, s, got)
			}
		}
	}
}
