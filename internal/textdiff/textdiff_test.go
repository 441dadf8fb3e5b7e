package textdiff

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestDiffEqualIsEmpty(t *testing.T) {
	got, err := Diff("m.md", "a\nb\n", "a\nb\n")
	if err != nil || got != "" {
		t.Fatalf("Diff of equal texts = %q, %v; want empty", got, err)
	}
}

func TestDiffShowsChangedLinesAndAppliesBack(t *testing.T) {
	old := "# Title\n\nkeep 1\nkeep 2\nkeep 3\nold line\nkeep 4\n"
	new := "# Title\n\nkeep 1\nkeep 2\nkeep 3\nnew line\nadded\nkeep 4\n"
	got, err := Diff(".agent/DEVELOPMENT_MATRIX.md", old, new)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--- a/.agent/DEVELOPMENT_MATRIX.md\n", "+++ b/.agent/DEVELOPMENT_MATRIX.md\n", "\n-old line\n", "\n+new line\n+added\n", "\n keep 3\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("diff lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "# Title") {
		t.Errorf("diff shows a line more than 3 lines away from the change:\n%s", got)
	}
	// The diff is a real patch: git applies it to old and gets new.
	if back := gitApply(t, ".agent/DEVELOPMENT_MATRIX.md", old, got); back != new {
		t.Fatalf("git apply of the diff gives\n%q\nwant %q", back, new)
	}
}

// gitApply writes old to name in a temp dir, applies patch with git apply and
// returns the result.
func gitApply(t *testing.T, name, old, patch string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "apply", "-")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(patch)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git apply: %v: %s\n%s", err, out, patch)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDiffMissingFinalNewline(t *testing.T) {
	got, err := Diff("m.md", "a\nb", "a\nb\nc\n")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, `\ No newline at end of file`) {
		t.Errorf("diff does not mark the missing final newline:\n%s", got)
	}
	if back := gitApply(t, "m.md", "a\nb", got); back != "a\nb\nc\n" {
		t.Fatalf("git apply gives %q", back)
	}
}
