// Package textdiff renders the unified diffs that dry runs print
// (`agentinfra migrate --dry-run`, and `validate --fix --dry-run`), so every
// command shows a change the same way, the way `git diff` does.
package textdiff

import (
	"fmt"

	udiff "github.com/aymanbagabas/go-udiff"
)

// contextLines is git's default.
const contextLines = 3

// Diff returns the unified diff that turns old into new, with the file
// labelled a/name and b/name as git labels it, and "" when they are equal.
// Lines are compared whole, line endings included, so a CRLF file diffs
// cleanly and a changed line ending shows as a changed line.
func Diff(name, old, new string) (string, error) {
	if old == new {
		return "", nil
	}
	out, err := udiff.ToUnified("a/"+name, "b/"+name, old, udiff.Lines(old, new), contextLines)
	if err != nil {
		return "", fmt.Errorf("diff %s: %w", name, err)
	}
	return out, nil
}
