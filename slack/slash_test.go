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

// slash sends /agentinfra text from u and returns the text of the ack's
// payload (what Slack shows the caller).
func (w *world) slash(u fakeslack.User, text string) string {
	w.t.Helper()
	env, err := w.fake.Slash(u, channel, "/agentinfra", text)
	if err != nil {
		w.t.Fatal(err)
	}
	raw, err := w.fake.Acked(w.ctx, env)
	if err != nil {
		w.t.Fatal(err)
	}
	var p struct{ Text string }
	json.Unmarshal(raw, &p)
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
	got := tail(b.String(), 30, 2500)
	if !strings.HasPrefix(got, "… (70 lines cut)\nline 70\n") || !strings.HasSuffix(got, "line 99") {
		t.Fatalf("%q", got)
	}
}
