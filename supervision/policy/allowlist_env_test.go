package policy

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentinfra/agentinfra/contain"
)

// The allowlist's supervision section (the agents' environment, read by
// contain) is part of the file: it does not make the policy's strict
// reading refuse the allowlist.
func TestAllowlistTakesTheSupervisionEnv(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, AllowlistName)
	os.WriteFile(p, []byte("commands: [\"git status\"]\nsupervision:\n  env: allowlist\n  pass_env: [GOPATH]\n"), 0o600)
	pol := Load(dir, Paths{Workspace: filepath.Join(dir, FileName), Allowlist: p})
	if len(pol.Warnings) > 0 || len(pol.Allowlist.Commands) != 1 {
		t.Fatalf("warnings %v, allowlist %+v", pol.Warnings, pol.Allowlist)
	}
	if got := pol.Allowlist.Supervision; got.Env != contain.EnvAllowlist || len(got.PassEnv) != 1 {
		t.Fatalf("supervision: %+v", got)
	}
}
