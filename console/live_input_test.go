package console_test

import (
	"context"
	"fmt"
	"testing"

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
