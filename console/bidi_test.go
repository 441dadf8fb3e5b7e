package console_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/store"
)

// Issue 27, item 4: a right-to-left override (U+202E) in an agent's text
// reached the page raw, where it shows the characters after it backwards
// (a file "notes\u202etxt.exe" reads "notesexe.txt"). Every page and
// fragment now shows it, and the zero-width characters, as escapes.
func TestPageShowsBidiOverridesVisibly(t *testing.T) {
	w := newWorld(t)
	ck := w.login(t)
	ses := w.activeSession(t, "claude\u202e", "papi\u200b", "")
	_, err := w.st.RaiseRequest(context.Background(), store.NewRequest{SessionID: ses.ID, Kind: store.KindEdit, Tool: "Write",
		File: w.ws.Root + "/notes\u202etxt.exe", Title: "Write notes\u202etxt.exe", Risk: store.RiskLow, Timeout: time.Hour,
		Diff: "--- a/notes\u202etxt.exe\n+++ b/notes\u202etxt.exe\n@@ -0,0 +1 @@\n+\u2066hidden\u2069 \u202egnirts\n"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/inbox", "/inbox/list", "/sessions", "/sessions/list", fmt.Sprintf("/sessions/%d", ses.ID), fmt.Sprintf("/sessions/%d/panel", ses.ID)} {
		resp, body := get(t, noRedirect(), w.base+p, ck, nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s", p, resp.Status)
		}
		for _, c := range []string{"\u202e", "\u200b", "\u2066", "\u2069"} {
			if strings.Contains(body, c) {
				t.Errorf("GET %s: the page holds %+q raw", p, c)
			}
		}
		if !strings.Contains(body, `notes\u202etxt.exe`) && !strings.Contains(body, `claude\u202e`) {
			t.Errorf("GET %s: the override is not shown:\n%s", p, body)
		}
	}
}
