package codertest_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/fleet/coder"
	"github.com/agentinfra/agentinfra/fleet/coder/codertest"
)

func get(t *testing.T, srv *codertest.Server, path, token string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set(coder.SessionTokenHeader, token)
	}
	c := srv.HTTPClient()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// TestStrictAboutTheToken: the API answers 401 without the session token,
// an app 303 to /login, as Coder does.
func TestStrictAboutTheToken(t *testing.T) {
	srv := codertest.New(t)
	if resp := get(t, srv, "/api/v2/templates", ""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no token: %d", resp.StatusCode)
	}
	if resp := get(t, srv, "/api/v2/templates", "wrong"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a wrong token: %d", resp.StatusCode)
	}
	resp := get(t, srv, "/@alice/papi.main/apps/ccw/status", "")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/login?") {
		t.Errorf("an app without a token: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// TestOwnerFilter: without owner: the fake lists everyone's workspaces (an
// admin's view), with owner:NAME only that user's.
func TestOwnerFilter(t *testing.T) {
	srv := codertest.New(t)
	srv.AddForeignWorkspace("bob", "bobs-agent")
	srv.AddForeignWorkspace("carol", "carols-agent")
	count := func(q string) int {
		t.Helper()
		resp := get(t, srv, "/api/v2/workspaces?q="+url.QueryEscape(q), srv.Token)
		var r coder.WorkspacesResponse
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
			t.Fatal(err)
		}
		return r.Count
	}
	if n := count(""); n != 2 {
		t.Errorf("no filter: %d", n)
	}
	if n := count("owner:bob"); n != 1 {
		t.Errorf("owner:bob: %d", n)
	}
	if n := count("owner:me"); n != 0 {
		t.Errorf("owner:me: %d", n)
	}
}
