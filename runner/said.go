package runner

import (
	"strings"

	"github.com/agentinfra/agentinfra/internal/mdtext"
)

// saidLines is how many of the last stderr lines a failed run's error
// quotes.
const saidLines = 3

// saidSep joins the lines Said quotes.
const saidSep = " | "

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
	if said := strings.Join(keep, saidSep); said != "" && !strings.Contains(errText, keep[len(keep)-1]) {
		errText += saidMarker(cli) + said
	}
	return scrub(errText, secretValues(env))
}

func saidMarker(cli string) string { return "; " + cli + " said: " }

// SaidOf splits a text that holds an error made by Said (a run's error, a
// session's end reason "failed: …") into the text before what the CLI
// said and the lines it said, for a page that shows them apart; said is
// nil when the text quotes nothing of the CLI's.
func SaidOf(cli, text string) (head string, said []string) {
	i := strings.Index(text, saidMarker(cli))
	if cli == "" || i < 0 {
		return text, nil
	}
	return text[:i], strings.Split(text[i+len(saidMarker(cli)):], saidSep)
}
