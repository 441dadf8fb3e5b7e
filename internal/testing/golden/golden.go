// Package golden is the repository's one golden-file harness: it compares
// test output with files under testdata/ and rewrites them when the test
// binary runs with -update (`go test ./PKG -update`), showing a difference
// as a unified diff. For tests only.
package golden

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentinfra/agentinfra/internal/textdiff"
)

// The -update flag may be declared by another test file of the package that
// imports this one, so declare it only if missing.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files under testdata/")
	}
}

// Updating reports whether the test binary runs with -update.
func Updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// Check compares got with the file at path (relative to the package folder),
// or writes got there with -update. A difference names the first line that differs.
func Check(t testing.TB, path, got string) {
	t.Helper()
	if Updating() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (rerun with -update to create it): %v", err)
	}
	if got == string(want) {
		return
	}
	diff, err := textdiff.Diff(filepath.ToSlash(path), string(want), got)
	if err != nil {
		diff = "--- got ---\n" + got
	}
	t.Errorf("%s differs from the golden file (rerun with -update if the change is intended, then review the diff; - golden, + got):\n%s", path, diff)
}

// JSON renders v as the indented JSON golden files hold.
func JSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}
