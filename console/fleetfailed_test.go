package console_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/fleet"
)

// The Fleet's card of an agent whose last run failed says so, with what
// its CLI itself said on stderr (escaped, a line each), until another run
// starts; an agent whose run went well shows nothing of the kind.
func TestTheFleetCardSaysWhatTheFailedRunsCLISaid(t *testing.T) {
	t.Parallel()
	w, f := fleetWorldEnv(t, "STUB_MODE=crash", "STUB_ECHO_ENV=STUB_WORDS", "STUB_WORDS=<img src=x onerror=alert(1)>")
	ctx := context.Background()
	if _, err := f.Create(ctx, fleet.CreateInput{Name: "papi", Spec: "keep the API tests green", Source: fleet.SourceHuman}); err != nil {
		t.Fatal(err)
	}
	a := waitAgent(t, f, "papi", fleet.StatusIdle)
	if a.LastRun == nil || a.LastRun.Status != fleet.RunFailed {
		t.Fatalf("papi's last run: %+v, want a failed one", a.LastRun)
	}
	ck := w.login(t)
	_, body := get(t, noRedirect(), w.base+"/fleet/list", ck, nil)
	card := cardHTML(t, body, `data-key="papi"`)
	for _, want := range []string{"Last run failed", "said:", "stub: fatal: something broke", "&lt;img src=x onerror=alert(1)&gt;"} {
		if !strings.Contains(card, want) {
			t.Errorf("papi's card lacks %q:\n%s", want, card)
		}
	}
	if strings.Contains(card, "<img") {
		t.Errorf("the CLI's words reached the page unescaped:\n%s", card)
	}
}

func TestTheFleetCardOfAnAgentWhoseRunWentWellSaysNoFailure(t *testing.T) {
	t.Parallel()
	w, f := fleetWorldEnv(t, "STUB_MODE=ok")
	ctx := context.Background()
	if _, err := f.Create(ctx, fleet.CreateInput{Name: "papi", Spec: "keep the API tests green", Source: fleet.SourceHuman}); err != nil {
		t.Fatal(err)
	}
	waitAgent(t, f, "papi", fleet.StatusIdle)
	_, body := get(t, noRedirect(), w.base+"/fleet/list", w.login(t), nil)
	if card := cardHTML(t, body, `data-key="papi"`); strings.Contains(card, "failed") {
		t.Errorf("papi's run went well, yet its card says:\n%s", card)
	}
}
