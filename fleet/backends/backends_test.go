package backends_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/backends"
	"github.com/agentinfra/agentinfra/fleet/coder"
	"github.com/agentinfra/agentinfra/fleet/coder/codertest"
	"github.com/agentinfra/agentinfra/fleet/fleettest"
	"github.com/agentinfra/agentinfra/fleet/local"
	"github.com/agentinfra/agentinfra/workspace"
)

func TestOpenChoosesTheBackend(t *testing.T) {
	ws := fleettest.NewRepo(t)
	srv := codertest.New(t)
	env := map[string]string{coder.EnvURL: srv.URL, coder.EnvToken: srv.Token}
	getenv := func(k string) string { return env[k] }

	b, err := backends.Open(ws, backends.Options{Getenv: getenv})
	if _, ok := b.(*local.Fleet); err != nil || !ok {
		t.Fatalf("default backend %T, %v; want the local fleet", b, err)
	}
	b, err = backends.Open(ws, backends.Options{Name: "Coder", Getenv: getenv})
	if _, ok := b.(*coder.Backend); err != nil || !ok {
		t.Fatalf("--backend coder: %T, %v", b, err)
	}
	// Without CODER_URL: 503 naming what to set, and no typed nil backend.
	b, err = backends.Open(ws, backends.Options{Name: "coder"})
	var fe *agenterr.Error
	if b != nil || !errors.As(err, &fe) || fleet.CodeOf(fe) != fleet.CodeUnavailable || !strings.Contains(err.Error(), "CODER_URL") {
		t.Fatalf("coder without a URL: %v, %v", b, err)
	}
	// From the configuration: fleet.backend and the coder section.
	cfg := filepath.Join(ws.AgentDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("fleet:\n  backend: coder\ncoder:\n  url: "+srv.URL+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws = reopen(t, ws) // a workspace reads its config once: the next process sees the new file
	b, err = backends.Open(ws, backends.Options{Getenv: func(k string) string {
		if k == coder.EnvToken {
			return srv.Token
		}
		return ""
	}})
	if _, ok := b.(*coder.Backend); err != nil || !ok {
		t.Fatalf("fleet.backend coder: %T, %v", b, err)
	}
	if err := os.WriteFile(cfg, []byte("fleet:\n  backend: coder\ncoder: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws = reopen(t, ws)
	_, err = backends.Open(ws, backends.Options{Getenv: getenv})
	if !errors.As(err, &fe) || fleet.CodeOf(fe) != fleet.CodeBadInput || fe.Field != "config" {
		t.Fatalf("a config that is not YAML: %v", err)
	}
}

// reopen is ws as a new process finds it, its config not read yet.
func reopen(t *testing.T, ws *workspace.Workspace) *workspace.Workspace {
	t.Helper()
	fresh, err := workspace.New(ws.Root)
	if err != nil {
		t.Fatal(err)
	}
	return fresh
}
