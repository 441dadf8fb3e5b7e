package clicheck

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The tested versions are written once, in Tested: the install script
// pins each Max, and the docs' table names the same.
func TestTestedVersionsAreThoseInstalledAndDocumented(t *testing.T) {
	root := filepath.Join("..", "..")
	install, err := os.ReadFile(filepath.Join(root, "scripts", "install-tools.sh"))
	if err != nil {
		t.Fatal(err)
	}
	docs, err := os.ReadFile(filepath.Join(root, "docs", "supervision.md"))
	if err != nil {
		t.Fatal(err)
	}
	for cli, r := range Tested {
		if pin := fmt.Sprintf("%q", r.Package+"@"+r.Max); !strings.Contains(string(install), pin) {
			t.Errorf("%s: scripts/install-tools.sh does not pin %s", cli, pin)
		}
		if row := fmt.Sprintf("| %s | `%s` | %s |", cli, r.Package, r); !strings.Contains(string(docs), row) {
			t.Errorf("%s: docs/supervision.md has no row %q", cli, row)
		}
	}
}

func TestVersionsInRange(t *testing.T) {
	r := Range{Min: "0.60.0", Max: "0.61.2"}
	for v, want := range map[string]bool{"0.60.0": true, "0.61.2": true, "0.61.10": false, "0.59.9": false, "1.0.0": false} {
		if got := r.Contains(v); got != want {
			t.Errorf("%s in %s: %v, want %v", v, r, got, want)
		}
	}
	if v := ParseVersion("codex-cli 0.169.0\n"); v != "0.169.0" {
		t.Errorf("ParseVersion: %q", v)
	}
}
