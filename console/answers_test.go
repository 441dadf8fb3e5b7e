package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/console"
	"github.com/agentinfra/agentinfra/store"
)

// TestBrowserAnswersAContinuationPrompt: a prompt raised while the inbox is
// open appears without reload; Continue decides it in the store as the
// page's person, via web; a prompt answered from the terminal meanwhile
// loses its buttons for who answered.
func TestBrowserAnswersAContinuationPrompt(t *testing.T) {
	t.Parallel()
	ctx := tab(t)
	w := newWorld(t)
	ses := w.activeSession(t, "claude", "", "")
	w.open(t, ctx, "/inbox")
	bg := context.Background()
	p, err := w.st.RaisePrompt(bg, store.NewPrompt{SessionID: ses.ID, Kind: store.PromptClarification, Text: "Should the cache be on disk or in memory?"})
	if err != nil {
		t.Fatal(err)
	}
	card := fmt.Sprintf("#prompt-%d", p.ID)
	run(t, ctx, "the prompt appears without reload", visible(card+` form[action$="/continue"] button`))
	if got := textOf(t, ctx, card); !strings.Contains(got, "on disk or in memory") || !strings.Contains(strings.ToLower(got), "clarification") {
		t.Fatalf("the prompt's card: %q", got)
	}
	run(t, ctx, "Continue", click(card+` form[action$="/continue"] button`), visible(card+" .verdict"))
	got, err := w.st.Prompt(bg, p.ID)
	if err != nil || got.Status != store.PromptContinued || got.DecidedBy != "ana" || got.Surface != store.SurfaceWeb {
		t.Fatalf("the prompt in the store: %+v %v", got, err)
	}
	if v := textOf(t, ctx, card+" .verdict"); !strings.Contains(v, "via web by @ana") || !strings.Contains(v, "continued") {
		t.Fatalf("the verdict: %q", v)
	}

	// Answered elsewhere (the terminal's `agentinfra answer pN stop`).
	p2, err := w.st.RaisePrompt(bg, store.NewPrompt{SessionID: ses.ID, Kind: store.PromptContinuation, Text: "I stopped after the parser."})
	if err != nil {
		t.Fatal(err)
	}
	card2 := fmt.Sprintf("#prompt-%d", p2.ID)
	run(t, ctx, "the second prompt", visible(card2+` form[action$="/stop"] button`))
	if _, err := w.st.DecidePrompt(bg, store.PromptDecision{ID: p2.ID, Action: store.ActionStop, By: "ana", Surface: store.SurfaceTerminal}); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, "the terminal's answer shows", visible(card2+" .verdict"))
	if v := textOf(t, ctx, card2+" .verdict"); !strings.Contains(v, "Decided via terminal by @ana") || !strings.Contains(v, "stopped") {
		t.Fatalf("the verdict of a terminal answer: %q", v)
	}
	if n := evalJS[int](t, ctx, fmt.Sprintf(`document.querySelectorAll(%q).length`, card2+" .decide button")); n != 0 {
		t.Fatalf("%d buttons left on a prompt answered elsewhere", n)
	}
}

// TestBrowserNudgesAStallAlert: Nudge on a stall alert's card nudges it in
// the store as the page's person and queues the workspace's nudge message
// for the session; the card says who nudged.
func TestBrowserNudgesAStallAlert(t *testing.T) {
	t.Parallel()
	ctx := tab(t)
	w := newWorld(t)
	ses := w.activeSession(t, "codex", "papi", "d4e5f6")
	w.open(t, ctx, "/inbox")
	bg := context.Background()
	a, err := w.st.RaiseAlert(bg, ses.ID, "silent for 10m0s")
	if err != nil {
		t.Fatal(err)
	}
	card := fmt.Sprintf("#alert-%d", a.ID)
	nudge := card + ` form:not(.nudge-msg)[action$="/nudge"] button`
	run(t, ctx, "the alert appears without reload", visible(nudge))
	run(t, ctx, "Nudge", click(nudge), visible(card+" .verdict"))
	got, err := w.st.Alert(bg, a.ID)
	if err != nil || got.Status != store.AlertNudged || got.Nudges != 1 || got.DecidedBy != "ana" || got.Surface != store.SurfaceWeb {
		t.Fatalf("the alert in the store: %+v %v", got, err)
	}
	msgs, err := w.st.SteeringOf(bg, ses.ID)
	if err != nil || len(msgs) != 1 || msgs[0].Status != "queued" || msgs[0].Text == "" {
		t.Fatalf("the nudge's message for the session: %+v %v", msgs, err)
	}
	if v := textOf(t, ctx, card+" .verdict"); !strings.Contains(v, "Nudged via web by @ana (1 so far)") {
		t.Fatalf("the verdict: %q", v)
	}
}

// TestConsoleAnswersRefuseACrossOriginPost: the prompt and alert endpoints
// refuse a post from another origin (another site, another loopback port)
// and change nothing; the page's own origin answers.
func TestConsoleAnswersRefuseACrossOriginPost(t *testing.T) {
	w := newWorld(t)
	ck := w.login(t)
	bg := context.Background()
	ses := w.activeSession(t, "claude", "", "")
	p, err := w.st.RaisePrompt(bg, store.NewPrompt{SessionID: ses.ID, Kind: store.PromptContinuation})
	if err != nil {
		t.Fatal(err)
	}
	a, err := w.st.RaiseAlert(bg, ses.ID, "silent")
	if err != nil {
		t.Fatal(err)
	}
	cont := fmt.Sprintf("%s/prompts/%d/continue", w.base, p.ID)
	nudge := fmt.Sprintf("%s/alerts/%d/nudge", w.base, a.ID)
	for _, u := range []string{cont, nudge} {
		for _, origin := range []string{"http://evil.example", "http://127.0.0.1:1", "null", ""} {
			if resp, body := post(t, u, ck, origin, url.Values{"text": {"x"}}); resp.StatusCode != http.StatusForbidden {
				t.Errorf("POST %s from origin %q: %s %q", u, origin, resp.Status, body)
			}
		}
	}
	if got, _ := w.st.Prompt(bg, p.ID); got.Status != store.PromptPending {
		t.Fatalf("a refused POST decided the prompt: %+v", got)
	}
	if got, _ := w.st.Alert(bg, a.ID); got.Status != store.AlertPending {
		t.Fatalf("a refused POST nudged the alert: %+v", got)
	}
	if resp, body := post(t, cont, ck, w.base, url.Values{}); resp.StatusCode != http.StatusOK || !strings.Contains(body, "continued") {
		t.Fatalf("same-origin continue: %s %q", resp.Status, body)
	}
	// The compare-and-set: a second answer loses, saying who won.
	if resp, body := post(t, fmt.Sprintf("%s/prompts/%d/stop", w.base, p.ID), ck, w.base, url.Values{}); resp.StatusCode != http.StatusConflict || !strings.Contains(body, "already continued via web by @ana") {
		t.Fatalf("a second answer: %s %q", resp.Status, body)
	}
	if resp, body := post(t, nudge, ck, w.base, url.Values{"text": {"are the tests still running?"}}); resp.StatusCode != http.StatusOK {
		t.Fatalf("same-origin nudge: %s %q", resp.Status, body)
	}
	if msgs, _ := w.st.SteeringOf(bg, ses.ID); len(msgs) != 1 || msgs[0].Text != "are the tests still running?" {
		t.Fatalf("the nudge's message: %+v", msgs)
	}
}

// TestConsoleAnswersOnlyForTheOwnerOrAnOperator: a console run by someone
// who neither owns the session nor is an operator shows no buttons and is
// refused (403) with who may.
func TestConsoleAnswersOnlyForTheOwnerOrAnOperator(t *testing.T) {
	w := newWorld(t, worldOpts{opts: func(o *console.Options) { o.User = "bob" }})
	ck := w.login(t)
	bg := context.Background()
	ses := w.activeSession(t, "claude", "", "")
	p, err := w.st.RaisePrompt(bg, store.NewPrompt{SessionID: ses.ID, Kind: store.PromptContinuation})
	if err != nil {
		t.Fatal(err)
	}
	a, err := w.st.RaiseAlert(bg, ses.ID, "silent")
	if err != nil {
		t.Fatal(err)
	}
	_, page := get(t, noRedirect(), w.base+"/inbox", ck, nil)
	if strings.Contains(page, "/prompts/") || strings.Contains(page, "/alerts/") || !strings.Contains(page, "Only @ana or an operator may answer this prompt") {
		t.Fatalf("bob's inbox offers the buttons:\n%s", page)
	}
	for _, u := range []string{fmt.Sprintf("/prompts/%d/continue", p.ID), fmt.Sprintf("/alerts/%d/stop", a.ID)} {
		if resp, body := post(t, w.base+u, ck, w.base, url.Values{}); resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "only the session's owner @ana") {
			t.Errorf("bob answers %s: %s %q", u, resp.Status, body)
		}
	}
	if got, _ := w.st.Prompt(bg, p.ID); got.Status != store.PromptPending {
		t.Fatalf("bob decided the prompt: %+v", got)
	}
}
