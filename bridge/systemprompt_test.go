package bridge

import (
	"os"
	"path/filepath"
	"testing"
)

// A supervised run whose caller keeps the system prompt in a file of its
// own (a fleet run's runs/{run}.system.md) gives the CLI that file, and
// its cleanup leaves it; only a prompt without one gets a temporary file,
// removed by the cleanup (issue 30: supervised fleet runs passed a file in
// the system's temporary folder).
func TestSystemPromptFileIsTheRunsOwn(t *testing.T) {
	own := filepath.Join(t.TempDir(), "r1.system.md")
	os.WriteFile(own, []byte("You are a coder."), 0o600)
	path, cleanup, err := SystemPromptFile(Request{SystemPrompt: "You are a coder.", SystemPromptFile: own})
	if err != nil || path != own {
		t.Fatalf("the file given: %q %v, want the run's own %q", path, err, own)
	}
	cleanup()
	if _, err := os.Stat(own); err != nil {
		t.Fatalf("the cleanup removed the run's own file: %v", err)
	}
	tmp, cleanup, err := SystemPromptFile(Request{SystemPrompt: "You are a coder."})
	if err != nil || tmp == "" || tmp == own {
		t.Fatalf("without a file of the caller's: %q %v", tmp, err)
	}
	cleanup()
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("the temporary file is left: %v", err)
	}
}
