package console_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/agentinfra/agentinfra/internal/testing/poll"
	"github.com/chromedp/chromedp"
)

// TestBrowserALiveRefreshKeepsWhatIsBeingTyped: a live region re-rendered
// while a person types in it (here a session's panel, re-read each time the
// run's progress changes) keeps the text typed, the focus and the caret, so
// the typing goes on where it was.
func TestBrowserALiveRefreshKeepsWhatIsBeingTyped(t *testing.T) {
	t.Parallel()
	ctx := tab(t)
	w := newWorld(t)
	ses := w.activeSession(t, "claude", "papi", "d4e5f6")
	w.open(t, ctx, fmt.Sprintf("/sessions/%d", ses.ID))
	run(t, ctx, "type a reason to stop", visible(`#stop-reason`), chromedp.SendKeys(chromedp.CSS(`#stop-reason`), "wrong branch"))
	evalJS[bool](t, ctx, `window.__panel = document.querySelector('[data-key="panel"]'); true`)
	// The run goes on meanwhile: its progress changes the panel.
	if err := w.st.SetProgress(context.Background(), ses.ID, "Bash", "3 tool calls · “Running the tests.”"); err != nil {
		t.Fatal(err)
	}
	waitText(t, ctx, `[data-key="panel"] .facts`, "3 tool calls")
	if !evalJS[bool](t, ctx, `window.__panel !== document.querySelector('[data-key="panel"]')`) {
		t.Fatal("the panel was not re-rendered: the test shows nothing")
	}
	if got := evalJS[string](t, ctx, `document.querySelector('#stop-reason').value`); got != "wrong branch" {
		t.Fatalf("after the refresh the reason reads %q", got)
	}
	if id := evalJS[string](t, ctx, `document.activeElement && document.activeElement.id`); id != "stop-reason" {
		t.Fatalf("after the refresh the focus is on %q", id)
	}
	run(t, ctx, "go on typing", chromedp.KeyEvent(", said ana"))
	if got := evalJS[string](t, ctx, `document.querySelector('#stop-reason').value`); got != "wrong branch, said ana" {
		t.Fatalf("typing on after the refresh gives %q", got)
	}
}

// TestBrowserARefreshThatChangesNothingLeavesTheTypingAlone: another
// session's progress re-reads this session's panel, which has not changed;
// the person typing a reason in it keeps the focus, and the keys typed next
// land in the field. (The panel used to be taken out of the page and put
// back: the field lost the focus and the rest of the reason went nowhere.)
func TestBrowserARefreshThatChangesNothingLeavesTheTypingAlone(t *testing.T) {
	t.Parallel()
	ctx := tab(t)
	w := newWorld(t)
	ses := w.activeSession(t, "claude", "papi", "d4e5f6")
	other := w.activeSession(t, "codex", "lee", "a1b2c3")
	w.open(t, ctx, fmt.Sprintf("/sessions/%d", ses.ID))
	// Counts the refreshes done: a panel read and put on the page (the
	// count moves after the page's own handling of the answer).
	evalJS[bool](t, ctx, `window.__refreshed = 0;
		const text = Response.prototype.text;
		Response.prototype.text = function () {
			const panel = this.url.endsWith("/panel");
			return text.call(this).then((t) => { if (panel) setTimeout(() => window.__refreshed++, 0); return t; });
		};
		true`)
	run(t, ctx, "type a reason to stop", visible(`#stop-reason`), chromedp.SendKeys(chromedp.CSS(`#stop-reason`), "wrong "))
	before := evalJS[int](t, ctx, `window.__refreshed`)
	if err := w.st.SetProgress(context.Background(), other.ID, "Bash", "1 tool call"); err != nil {
		t.Fatal(err)
	}
	poll.EventuallyNil(t, func() error {
		if n := evalJS[int](t, ctx, `window.__refreshed`); n <= before {
			return fmt.Errorf("the panel was not read again after another session's progress")
		}
		return nil
	})
	if id := evalJS[string](t, ctx, `document.activeElement && document.activeElement.id`); id != "stop-reason" {
		t.Fatalf("after a refresh that changed nothing the focus is on %q", id)
	}
	run(t, ctx, "go on typing", chromedp.KeyEvent("branch"))
	if got := evalJS[string](t, ctx, `document.querySelector('#stop-reason').value`); got != "wrong branch" {
		t.Fatalf("typing on after the refresh gives %q", got)
	}
}

// TestBrowserTheSessionsListChangesLive: the Sessions page shows a run's
// progress as it changes, without a reload. (Its table has no version: the
// page kept the first rendering forever.)
func TestBrowserTheSessionsListChangesLive(t *testing.T) {
	t.Parallel()
	ctx := tab(t)
	w := newWorld(t)
	ses := w.activeSession(t, "claude", "papi", "d4e5f6")
	w.open(t, ctx, "/sessions")
	waitText(t, ctx, `[data-key="t"]`, "papi")
	if err := w.st.SetProgress(context.Background(), ses.ID, "Bash", "4 tool calls"); err != nil {
		t.Fatal(err)
	}
	waitText(t, ctx, `[data-key="t"]`, "4 tool calls")
}
