package console_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentinfra/agentinfra/internal/httpguard"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision"
	"github.com/agentinfra/agentinfra/supervision/host"
)

// A supervised agent's workspace (another machine's agentinfra host) that
// cannot be reached is named on the inbox with since when; its request is
// listed, with the workspace's name, once it answers again.
func TestTheInboxNamesAHostThatCannotBeReached(t *testing.T) {
	papi := newWorld(t)
	var down atomic.Bool
	down.Store(true)
	const token = "the-hosts-token"
	h := httpguard.Handler(host.Handler(papi.svc, host.ServerOptions{Name: "papi"}), httpguard.Options{Token: token, AnyHost: true})
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			http.Error(w, "Agent not connected", http.StatusBadGateway) // as Coder's proxy answers
			return
		}
		h.ServeHTTP(w, r)
	}))
	// Closed after the console's world (cleanups run last-registered
	// first): a follower of papi holds a stream through the proxy until
	// the console's service is closed, and Close waits for it.
	t.Cleanup(proxy.Close)
	hc, err := host.New(host.Options{Name: "papi", URL: proxy.URL, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	ses := papi.activeSession(t, "claude", "papi", "")
	r, err := papi.st.RaiseRequest(t.Context(), store.NewRequest{SessionID: ses.ID, Kind: store.KindCommand, Tool: "Bash", Command: "go test ./...", Title: "Run go test ./...", Risk: store.RiskHigh})
	if err != nil {
		t.Fatal(err)
	}

	w := newWorld(t, worldOpts{hosts: []supervision.HostEntry{{Number: 1, Host: hc}}})
	ck := w.login(t)
	c := noRedirect()
	resp, body := get(t, c, w.base+"/inbox", ck, nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "Host <strong>papi</strong> cannot be reached since") || !strings.Contains(body, "502 Agent not connected") {
		t.Fatalf("the inbox with papi down: %s\n%s", resp.Status, body)
	}
	down.Store(false)
	id := supervision.HostIDBase + r.ID
	_, body = get(t, c, w.base+"/inbox/list", ck, nil)
	if strings.Contains(body, "cannot be reached") || !strings.Contains(body, `id="req-`+strconv.FormatInt(id, 10)+`"`) || !strings.Contains(body, "workspace papi") {
		t.Fatalf("papi is back, the inbox's list:\n%s", body)
	}
}
