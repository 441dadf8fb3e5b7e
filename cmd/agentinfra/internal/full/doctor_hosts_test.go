package full

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/internal/httpguard"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision"
	"github.com/agentinfra/agentinfra/supervision/host"
	"github.com/agentinfra/agentinfra/workspace"
)

// doctor asks each supervised workspace's agentinfra host whether it
// answers: one that does is named with its agentinfra; one behind a proxy
// that answers for it (the workspace stopped) is a warning that says how
// to start it.
func TestDoctorChecksTheSupervisedWorkspaces(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".agent"), 0o755); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenWorkspace(t.Context(), ws, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc, err := supervision.New(supervision.Options{Store: st, Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	const token = "the-hosts-token"
	up := httptest.NewServer(httpguard.Handler(host.Handler(svc, host.ServerOptions{Name: "papi"}), httpguard.Options{Token: token, AnyHost: true}))
	defer up.Close()
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "Agent not connected", http.StatusBadGateway)
	}))
	defer down.Close()
	entry := func(n int64, name, u string) supervision.HostEntry {
		c, err := host.New(host.Options{Name: name, URL: u, Token: token})
		if err != nil {
			t.Fatal(err)
		}
		return supervision.HostEntry{Number: n, Host: c}
	}

	hosts := []supervision.HostEntry{entry(1, "papi", up.URL)}
	o := &DoctorOptions{Hosts: func(context.Context) ([]supervision.HostEntry, []string) { return hosts, nil }}
	if f := checkCoderHosts(t.Context(), o); f.Status != DoctorOK || !strings.Contains(f.Detail, "papi (agentinfra "+host.Version()) {
		t.Fatalf("papi up: %+v", f)
	}
	hosts = append(hosts, entry(2, "sony", down.URL))
	f := checkCoderHosts(t.Context(), o)
	if f.Status != DoctorWarn || !strings.Contains(f.Detail, "1 host(s) answer") || !strings.Contains(f.Detail, "sony") || !strings.Contains(f.Detail, "502") || !strings.Contains(f.Fix, "coder start") {
		t.Fatalf("sony down: %+v", f)
	}
	if f := checkCoderHosts(t.Context(), &DoctorOptions{}); f.Status != DoctorOK || !strings.Contains(f.Detail, "no supervised agents") {
		t.Fatalf("no hosts: %+v", f)
	}
}
