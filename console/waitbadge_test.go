package console_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/store"
)

// approve decides request r as ana from the web.
func (w *world) approve(t *testing.T, r store.Request) {
	t.Helper()
	if _, err := w.st.Decide(context.Background(), store.Decision{RequestID: r.ID, Approve: true, By: "ana", Surface: store.SurfaceWeb}); err != nil {
		t.Fatal(err)
	}
}

// badgeHTML is the link of a card's badge to request r on the inbox.
func badgeHTML(r store.Request) string {
	return fmt.Sprintf(`<a class="waitbadge" href="/inbox#req-%d"`, r.ID)
}

// The Board's card of a task whose session waits for a person says so,
// with the request and since when, linking to it on the inbox; the other
// cards say nothing, and the badge goes once the request is decided.
func TestTheBoardCardOfAWaitingTaskLinksToTheRequest(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ck := w.login(t)
	c := noRedirect()
	ses := w.activeSession(t, "claude", "papi", "a1b2c3")
	r := w.raiseEdit(t, ses)
	resp, body := get(t, c, w.base+"/board/columns", ck, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /board/columns: %s", resp.Status)
	}
	card := cardHTML(t, body, `id="task-a1b2c3"`)
	if !strings.Contains(card, badgeHTML(r)) || !strings.Contains(card, fmt.Sprintf("request %d", r.ID)) ||
		!strings.Contains(card, "Write docs/guide.md") || !strings.Contains(card, "since <time datetime=") {
		t.Fatalf("the waiting task's card:\n%s", card)
	}
	if n := strings.Count(body, `class="waitbadge"`); n != 1 {
		t.Fatalf("%d badges on the board, want 1 (only a1b2c3 waits)", n)
	}
	w.approve(t, r)
	if _, body = get(t, c, w.base+"/board/columns", ck, nil); strings.Contains(body, `class="waitbadge"`) {
		t.Fatalf("the badge stayed after the approval:\n%s", cardHTML(t, body, `id="task-a1b2c3"`))
	}
}

// The Fleet's card of an agent whose run waits for a person says waiting,
// with the request linked, and busy again without it once decided.
func TestTheFleetCardOfAWaitingAgentLinksToTheRequest(t *testing.T) {
	t.Parallel()
	w, f := fleetWorld(t)
	ctx := context.Background()
	if _, err := f.Create(ctx, fleet.CreateInput{Name: "papi", Spec: "keep the API tests green", Source: fleet.SourceHuman}); err != nil {
		t.Fatal(err)
	}
	a := waitAgent(t, f, "papi", fleet.StatusBusy)
	// The run's supervised session, as a supervised run's supervisor opens it.
	ses, err := w.st.CreateSession(ctx, store.NewSession{Owner: "ana", Workspace: w.ws.Root, CLI: "claude", RunID: a.CurrentRun.ID, Agent: "@papi"})
	if err != nil {
		t.Fatal(err)
	}
	if ses, err = w.st.SetSessionStatus(ctx, ses.ID, store.Transition{To: store.SessionActive, By: "ana"}); err != nil {
		t.Fatal(err)
	}
	ck := w.login(t)
	c := noRedirect()
	_, body := get(t, c, w.base+"/fleet/list", ck, nil)
	if card := cardHTML(t, body, `data-key="papi"`); !strings.Contains(card, `st-busy`) || strings.Contains(card, "waitbadge") {
		t.Fatalf("papi's card before any request:\n%s", card)
	}
	r := w.raiseEdit(t, ses)
	_, body = get(t, c, w.base+"/fleet/list", ck, nil)
	card := cardHTML(t, body, `data-key="papi"`)
	if !strings.Contains(card, `<span class="st st-waiting">waiting</span>`) || !strings.Contains(card, badgeHTML(r)) || !strings.Contains(card, "Write docs/guide.md") ||
		!strings.Contains(card, `action="/fleet/papi/stop"`) {
		t.Fatalf("papi's card while its run waits (want waiting, the badge and Stop):\n%s", card)
	}
	w.approve(t, r)
	_, body = get(t, c, w.base+"/fleet/list", ck, nil)
	if card := cardHTML(t, body, `data-key="papi"`); !strings.Contains(card, `st-busy`) || strings.Contains(card, "waitbadge") {
		t.Fatalf("papi's card after the approval:\n%s", card)
	}
}

// cardHTML is the element of body that starts with the tag holding attr,
// up to the next card's start.
func cardHTML(t *testing.T, body, attr string) string {
	t.Helper()
	i := strings.Index(body, attr)
	if i < 0 {
		t.Fatalf("no %s in:\n%s", attr, body)
	}
	rest := body[i:]
	for _, next := range []string{`<li class="tcard"`, `<article `} {
		if j := strings.Index(rest[1:], next); j >= 0 {
			rest = rest[:j+1]
		}
	}
	return rest
}

// TestBrowserBoardShowsWhatATaskWaitsFor: on the open Board, the card of
// a task whose session starts to wait shows the badge (no reload), its
// link opens the request on the inbox, and the badge goes after the
// decision.
func TestBrowserBoardShowsWhatATaskWaitsFor(t *testing.T) {
	t.Parallel()
	ctx := tab(t)
	w := newWorld(t)
	ses := w.activeSession(t, "claude", "papi", "a1b2c3")
	w.open(t, ctx, "/board")
	evalJS[bool](t, ctx, `window.__notReloaded = true`)
	r := w.raiseEdit(t, ses)
	badge := `#task-a1b2c3 a.waitbadge`
	run(t, ctx, "the waiting task's card shows the badge", visible(badge))
	if got := textOf(t, ctx, badge); !strings.Contains(got, fmt.Sprintf("request %d", r.ID)) || !strings.Contains(got, "Write docs/guide.md") || !strings.Contains(got, "since") {
		t.Fatalf("the badge reads %q", got)
	}
	if href := evalJS[string](t, ctx, `document.querySelector("#task-a1b2c3 a.waitbadge").getAttribute("href")`); href != fmt.Sprintf("/inbox#req-%d", r.ID) {
		t.Fatalf("the badge links to %q", href)
	}
	if n := evalJS[int](t, ctx, `document.querySelectorAll("a.waitbadge").length`); n != 1 {
		t.Fatalf("%d badges on the board, want 1", n)
	}
	w.approve(t, r)
	run(t, ctx, "the badge goes after the decision", chromedp.WaitNotPresent(chromedp.CSS(badge)))
	if !evalJS[bool](t, ctx, `window.__notReloaded === true`) {
		t.Fatal("the page was reloaded: the badge must come and go live")
	}
}
