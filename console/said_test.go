package console_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/agentcli/gemini"
	"github.com/agentinfra/agentinfra/agentrun"
	"github.com/agentinfra/agentinfra/internal/testing/agentstub"
	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/store"
)

// A session whose CLI failed shows, on its page, what the CLI itself said
// last on stderr — its lines apart from how the session ended, escaped,
// secrets redacted (issue 30) — from a real process's failure as the run
// ends its session.
func TestSessionPageShowsWhatTheFailedCLISaid(t *testing.T) {
	w := newWorld(t)
	ck := w.login(t)
	bin := agentstub.Build(t)
	ctx := context.Background()
	fail := func(echo ...string) store.Session {
		ses := w.activeSession(t, "gemini", "", "")
		env := append([]string{"STUB_MODE=crash", "STUB_EXIT=3"}, echo...)
		res, err := runner.Exec(ctx, gemini.Runner{}, runner.Request{Prompt: "do it", Model: "stub-model", Binary: bin, Env: env, KillGrace: 300 * time.Millisecond}, nil)
		var rec agentrun.Record
		rec.Conclude(res, err, false, time.Now())
		// How a supervised run ends its session (execute.endSession).
		ses, err = w.st.SetSessionStatus(ctx, ses.ID, store.Transition{To: store.SessionTerminated, By: "ana", Surface: store.SurfaceSupervisor, Reason: rec.Outcome + ": " + rec.Reason})
		if err != nil {
			t.Fatal(err)
		}
		return ses
	}
	page := func(ses store.Session) string {
		_, body := get(t, noRedirect(), fmt.Sprintf("%s/sessions/%d", w.base, ses.ID), ck, nil)
		return body
	}

	const markup = `<img src=x onerror="alert(1)">`
	body := page(fail("STUB_ECHO_ENV=HINT", "HINT="+markup))
	said := `<div class="said"><dt>gemini said</dt><dd><pre>`
	i := strings.Index(body, said)
	if i < 0 {
		t.Fatalf("the page has no block of what gemini said:\n%s", body)
	}
	block := body[i+len(said) : i+strings.Index(body[i:], "</pre>")]
	// One line each, as the CLI wrote them, the markup escaped.
	if want := "stub: fatal: something broke\nstub: invalid credential HINT=&lt;img src=x onerror=&#34;alert(1)&#34;&gt;"; block != want {
		t.Errorf("what gemini said: %q, want %q", block, want)
	}
	if strings.Contains(body, markup) {
		t.Error("the CLI's words reach the page unescaped")
	}
	if !strings.Contains(body, "terminated</span> — failed: gemini exited with code 3</dd>") {
		t.Errorf("how the session ended is not shown apart from what gemini said:\n%s", body)
	}

	// A credential the CLI echoed is redacted before it is kept.
	if body := page(fail("STUB_ECHO_ENV=GEMINI_API_KEY", "GEMINI_API_KEY=AIzaSecretValue123")); strings.Contains(body, "AIzaSecretValue123") || !strings.Contains(body, "GEMINI_API_KEY=[REDACTED]") {
		t.Errorf("the page shows a secret the CLI echoed, or not its redaction:\n%s", body)
	}

	// A session that ended well says nothing of the kind.
	ok := w.activeSession(t, "gemini", "", "")
	w.st.SetSessionStatus(ctx, ok.ID, store.Transition{To: store.SessionTerminated, By: "ana", Surface: store.SurfaceSupervisor, Reason: "success: completed"})
	if body := page(ok); strings.Contains(body, `class="said"`) || !strings.Contains(body, "success: completed") {
		t.Errorf("a session that ended well:\n%s", body)
	}
}
