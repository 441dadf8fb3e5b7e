package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCLIHandoff(t *testing.T) {
	root := ctxCLIWorkspace(t)
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(root))
	code, out, errOut := runCLI(t, root, cliOpts{}, "handoff")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if out != ".agent/handoffs/261121_1405_handoff.md\n" {
		t.Fatalf("stdout = %q", out)
	}
	b, err := os.ReadFile(filepath.Join(root, ".agent", "handoffs", "261121_1405_handoff.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, want := range []string{
		"## In progress (1)", "### ab12cd: Add retry", "> Half done; next: wire it in.",
		"## Recently done", "- 9a9a9a P3 easy -: Old work (updated 2026-11-19)",
		"## Next up", "- ef34ab P2 med -: Write docs (created 2026-11-11)",
		"## Git\n\nThe workspace root is not in a git repository.",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("handoff lacks %q:\n%s", want, text)
		}
	}
	// Same minute again: a new file, the first one untouched.
	code, out, _ = runCLI(t, root, cliOpts{}, "handoff", "--json")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var v struct {
		Path   string           `json:"path"`
		Text   string           `json:"text"`
		NextUp []map[string]any `json:"next_up"`
		Review []map[string]any `json:"review"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if v.Path != ".agent/handoffs/261121_1405_handoff_2.md" || v.Text != text || len(v.NextUp) != 1 || v.Review == nil {
		t.Errorf("json = %+v", v)
	}
	if again, _ := os.ReadFile(filepath.Join(root, ".agent", "handoffs", "261121_1405_handoff.md")); string(again) != text {
		t.Error("the first handoff changed")
	}
}

func TestCLIHandoffOut(t *testing.T) {
	root := ctxCLIWorkspace(t)
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(root))
	outside := filepath.Join(t.TempDir(), "h.md")
	code, _, errOut := runCLI(t, root, cliOpts{}, "handoff", "--out", outside)
	if code != 2 || !strings.Contains(errOut, "outside the workspace") { // invalid
		t.Errorf("--out outside: exit %d, stderr %q", code, errOut)
	}
	if _, err := os.Stat(outside); err == nil {
		t.Error("wrote outside the workspace")
	}
	code, _, errOut = runCLI(t, root, cliOpts{}, "handoff", "--out", "src/a.go")
	if code != 1 || !strings.Contains(errOut, "already exists") {
		t.Errorf("--out existing: exit %d, stderr %q", code, errOut)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "src", "a.go")); string(b) != "package src\n" {
		t.Error("--out overwrote an existing file")
	}
	code, out, errOut := runCLI(t, root, cliOpts{}, "handoff", "--out", "HANDOFF.md")
	if code != 0 || out != "HANDOFF.md\n" {
		t.Errorf("--out HANDOFF.md: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// A relative --out is relative to the current folder, like other path flags.
	code, out, errOut = runCLI(t, filepath.Join(root, "src"), cliOpts{}, "handoff", "--out", "h.md")
	if code != 0 || out != "src/h.md\n" {
		t.Errorf("--out from src/: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code, _, _ := runCLI(t, root, cliOpts{}, "handoff", "extra-arg"); code != 2 {
		t.Errorf("extra argument: exit %d, want 2", code)
	}
}
