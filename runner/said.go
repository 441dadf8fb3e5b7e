package runner

import (
	"strings"

	"github.com/agentinfra/agentinfra/internal/mdtext"
)

// saidLines is how many of the last stderr lines a failed run's error
// quotes.
const saidLines = 3

// Said is a failed run's error with what the CLI itself said last on
// stderr — its own words, where the reason usually is ("--dangerously-skip-
// permissions cannot be used with root/sudo privileges") — appended as
// "; claude said: …" (up to the last three lines, each cut at 300 bytes),
// unless the error holds them already. The values of env's secret-named
// variables are redacted from the whole text (a CLI may echo a credential).
// errText "" (the run did not fail) stays "".
func Said(cli, errText, stderrTail string, env []string) string {
	if errText == "" {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(stderrTail), "\n")
	var keep []string
	for i := len(lines) - 1; i >= 0 && len(keep) < saidLines; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			keep = append(keep, mdtext.Shorten(l, 300))
		}
	}
	for i, j := 0, len(keep)-1; i < j; i, j = i+1, j-1 {
		keep[i], keep[j] = keep[j], keep[i]
	}
	if said := strings.Join(keep, " | "); said != "" && !strings.Contains(errText, keep[len(keep)-1]) {
		errText += "; " + cli + " said: " + said
	}
	return scrub(errText, secretValues(env))
}
