package console_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/agentinfra/agentinfra/store"
)

// background makes the tab's documents say they are in the background
// (headless Chromium keeps every tab visible) and records each system
// notification the page constructs, in window.__notified.
const background = `
Object.defineProperty(document, "hidden", {get: function () { return true; }});
window.__notified = [];
(function (N) {
  function Recorded(title, opts) { window.__notified.push({title: title, body: (opts || {}).body, tag: (opts || {}).tag}); return new N(title, opts); }
  Recorded.requestPermission = N.requestPermission.bind(N);
  Object.defineProperty(Recorded, "permission", {get: function () { return N.permission; }});
  window.Notification = Recorded;
})(window.Notification);
`

// TestBrowserNotifiesWhatStartsWaitingInTheBackground: with the
// notification permission granted and the page in the background, a new
// request raises one system notification naming it (what waited when the
// page was made raises none); the inbox badge counts what waits and is
// hidden at zero.
func TestBrowserNotifiesWhatStartsWaitingInTheBackground(t *testing.T) {
	t.Parallel()
	ctx := tab(t)
	w := newWorld(t)
	ses := w.activeSession(t, "claude", "", "")
	run(t, ctx, "grant notifications and go to the background", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		if _, err := cdp.Call(ctx, tg, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{Permission: &cdpbrowser.PermissionDescriptor{Name: "notifications"}, Setting: cdpbrowser.PermissionSettingGranted, Origin: w.base}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: background})
		return err
	}))
	first := w.raiseEdit(t, ses)
	w.open(t, ctx, "/sessions")
	if got := evalJS[string](t, ctx, `Notification.permission`); got != "granted" {
		t.Fatalf("the permission: %q", got)
	}
	if n := textOf(t, ctx, "#pending-count"); n != "1" {
		t.Fatalf("the badge: %q", n)
	}
	// The first is answered; the second is new while the page is away.
	if _, err := w.st.Decide(context.Background(), store.Decision{RequestID: first.ID, Approve: true, By: "ana", Surface: store.SurfaceWeb}); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, "the badge is hidden at zero", chromedp.WaitNotVisible(chromedp.CSS("#pending-count")))
	second := w.raiseEdit(t, ses)
	run(t, ctx, "the badge counts the new request", chromedp.WaitVisible(chromedp.CSS("#pending-count")))
	poll := fmt.Sprintf(`new Promise(function (ok) { (function check() { if (window.__notified.some(function (n) { return n.tag === "req-%d"; })) ok(JSON.stringify(window.__notified)); else setTimeout(check, 50); })(); })`, second.ID)
	got := value(t, ctx, "the notification", chromedp.Evaluate[string](poll, chromedp.EvalAwaitPromise))
	if strings.Count(got, `"tag"`) != 1 || !strings.Contains(got, fmt.Sprintf("agentinfra: request %d (risk high)", second.ID)) || !strings.Contains(got, "Write docs/guide.md") {
		t.Errorf("the notifications: %s", got)
	}
}
