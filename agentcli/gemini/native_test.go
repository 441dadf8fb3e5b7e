package gemini

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// agentinfra's policy goes to gemini's admin tier, above anything a user
// or a workspace may have written — unless the machine's own admin
// policies make gemini ignore --admin-policy: then the user's tier, said.
func TestPolicyFlag(t *testing.T) {
	sys := t.TempDir()
	if flag, warning := policyFlag(sys); flag != "--admin-policy" || warning != "" {
		t.Errorf("no system policies: %s, %q", flag, warning)
	}
	if flag, _ := policyFlag(filepath.Join(sys, "missing")); flag != "--admin-policy" {
		t.Errorf("no system policies folder: %s", flag)
	}
	if err := os.WriteFile(filepath.Join(sys, "site.toml"), []byte("[[rule]]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if flag, warning := policyFlag(sys); flag != "--policy" || !strings.Contains(warning, sys) {
		t.Errorf("with system policies: %s, %q", flag, warning)
	}
}
