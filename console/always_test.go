package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/store"
)

// raiseEdit is a pending edit request of the session (its "approve always"
// rule is write: docs/guide.md).
func (w *world) raiseEdit(t *testing.T, ses store.Session) store.Request {
	t.Helper()
	r, err := w.st.RaiseRequest(context.Background(), store.NewRequest{SessionID: ses.ID, Kind: store.KindEdit, Tool: "Write",
		File: filepath.Join(w.ws.Root, "docs", "guide.md"), Diff: "+hello\n", Title: "Write docs/guide.md", Risk: store.RiskHigh})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestBrowserApprovesAlways: "Approve always" on a request's card approves
// it through the supervision service as the page's person and writes the
// rule the card showed to .agent/policy.yaml.
func TestBrowserApprovesAlways(t *testing.T) {
	t.Parallel()
	ctx := tab(t)
	w := newWorld(t)
	ses := w.activeSession(t, "claude", "", "")
	w.open(t, ctx, "/inbox")
	r := w.raiseEdit(t, ses)
	card := fmt.Sprintf("#req-%d", r.ID)
	always := card + " form.always button"
	run(t, ctx, "the request appears with Approve always", visible(always))
	if rule := textOf(t, ctx, card+" .rule"); !strings.Contains(rule, "write: docs/guide.md") {
		t.Fatalf("the rule the card shows: %q", rule)
	}
	run(t, ctx, "Approve always", click(always), visible(card+" .verdict"))
	got, err := w.st.Request(context.Background(), r.ID)
	if err != nil || got.Status != store.StatusApproved || !got.Always || got.DecidedBy != "ana" || got.Surface != store.SurfaceWeb {
		t.Fatalf("the request in the store: %+v %v", got, err)
	}
	if pol, _ := os.ReadFile(filepath.Join(w.ws.Root, ".agent", "policy.yaml")); !strings.Contains(string(pol), "docs/guide.md") {
		t.Fatalf("the policy file: %s", pol)
	}
}

// The page answers through the service what the CLI answers: a rule that
// is not the one shown writes nothing and decides nothing; a refined
// prompt and a dismissed alert are stored as the page's person's, and
// every change is published on the bus the live pages follow.
func TestConsoleAnswersThroughTheService(t *testing.T) {
	w := newWorld(t)
	ck := w.login(t)
	bg := context.Background()
	ses := w.activeSession(t, "claude", "", "")
	sub := w.bus.Subscribe(events.Filter{Kinds: []events.Kind{events.RequestChanged, events.PromptChanged, events.AlertChanged}}, 0)
	defer sub.Close()

	r := w.raiseEdit(t, ses)
	approve := fmt.Sprintf("%s/inbox/%d/approve", w.base, r.ID)
	if resp, body := post(t, approve, ck, w.base, url.Values{"always": {"1"}, "rule": {"write: **"}}); resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "the rule changed") {
		t.Fatalf("approve always with another rule: %s %q", resp.Status, body)
	}
	if got, _ := w.st.Request(bg, r.ID); got.Status != store.StatusPending {
		t.Fatalf("a refused approve always decided: %+v", got)
	}
	if _, err := os.Stat(filepath.Join(w.ws.Root, ".agent", "policy.yaml")); err == nil {
		t.Fatal("a refused approve always wrote the policy file")
	}
	if resp, body := post(t, approve, ck, w.base, url.Values{"always": {"1"}, "rule": {"write: docs/guide.md"}}); resp.StatusCode != http.StatusOK {
		t.Fatalf("approve always: %s %q", resp.Status, body)
	}

	p, err := w.st.RaisePrompt(bg, store.NewPrompt{SessionID: ses.ID, Kind: store.PromptClarification, Text: "Which database?"})
	if err != nil {
		t.Fatal(err)
	}
	if resp, body := post(t, fmt.Sprintf("%s/prompts/%d/refine", w.base, p.ID), ck, w.base, url.Values{"text": {"use SQLite"}}); resp.StatusCode != http.StatusOK {
		t.Fatalf("refine: %s %q", resp.Status, body)
	}
	if got, _ := w.st.Prompt(bg, p.ID); got.Status != store.PromptRefined || got.Instruction != "use SQLite" || got.DecidedBy != "ana" || got.Surface != store.SurfaceWeb {
		t.Fatalf("the refined prompt: %+v", got)
	}

	a, err := w.st.RaiseAlert(bg, ses.ID, "silent for 5m0s")
	if err != nil {
		t.Fatal(err)
	}
	if resp, body := post(t, fmt.Sprintf("%s/alerts/%d/dismiss", w.base, a.ID), ck, w.base, url.Values{}); resp.StatusCode != http.StatusOK || !strings.Contains(body, "dismissed") {
		t.Fatalf("dismiss: %s %q", resp.Status, body)
	}
	if got, _ := w.st.Alert(bg, a.ID); got.Status != store.AlertDismissed || got.DecidedBy != "ana" || got.Surface != store.SurfaceWeb {
		t.Fatalf("the dismissed alert: %+v", got)
	}

	var got []string
	for {
		e, ok := sub.TryNext()
		if !ok {
			break
		}
		got = append(got, fmt.Sprintf("%s %d %s %s", e.Kind, e.ItemID, e.Status, e.Actor))
	}
	want := []string{
		fmt.Sprintf("%s %d approved ana", events.RequestChanged, r.ID),
		fmt.Sprintf("%s %d refined ana", events.PromptChanged, p.ID),
		fmt.Sprintf("%s %d dismissed ana", events.AlertChanged, a.ID),
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("published:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// "Approve for this session" on a card approves the request through the
// service as the page's person, for the rest of its session: the store
// keeps the scope, the policy file is not written, the verdict says so. A
// critical request's card does not offer it, and the service refuses it.
func TestConsoleApprovesForTheSession(t *testing.T) {
	w := newWorld(t)
	ck := w.login(t)
	bg := context.Background()
	ses := w.activeSession(t, "claude", "", "")
	crit, err := w.st.RaiseRequest(bg, store.NewRequest{SessionID: ses.ID, Kind: store.KindCommand, Tool: "Bash", Command: "make", Title: "Run make", Risk: store.RiskCritical})
	if err != nil {
		t.Fatal(err)
	}
	_, page := get(t, http.DefaultClient, w.base+"/inbox", ck, nil)
	if strings.Contains(page, "Approve for this session") {
		t.Error("a critical request's card offers approve for this session")
	}
	approve := func(id int64) (*http.Response, string) {
		return post(t, fmt.Sprintf("%s/inbox/%d/approve", w.base, id), ck, w.base, url.Values{"session": {"1"}})
	}
	if resp, body := approve(crit.ID); resp.StatusCode == http.StatusOK || !strings.Contains(body, "never approved for a session") {
		t.Fatalf("approve a critical request for the session: %s %q", resp.Status, body)
	}
	w.st.CloseRequest(bg, crit.ID, store.StatusWithdrawn, store.SurfaceAgent, "next")

	r := w.raiseEdit(t, ses)
	_, page = get(t, http.DefaultClient, w.base+"/inbox", ck, nil)
	if !strings.Contains(page, "Approve for this session") || !strings.Contains(page, "write: docs/guide.md") {
		t.Fatalf("the card offers no approve for this session:\n%s", page)
	}
	if resp, body := approve(r.ID); resp.StatusCode != http.StatusOK || !strings.Contains(body, "approved without asking until it ends") {
		t.Fatalf("approve for the session: %s %q", resp.Status, body)
	}
	got, err := w.st.Request(bg, r.ID)
	if err != nil || got.Status != store.StatusApproved || got.Scope != store.ScopeSession || got.Always || got.DecidedBy != "ana" || got.Surface != store.SurfaceWeb {
		t.Fatalf("the request in the store: %+v %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(w.ws.Root, ".agent", "policy.yaml")); err == nil {
		t.Error("approve for the session wrote the policy file")
	}
}
