package task

import "testing"

func TestReadmeHolder(t *testing.T) {
	for readme, want := range map[string]string{
		"## Status log\n\n- 2026-01-21: created as TODO\n":                             "",
		"- 2026-01-21 10:00: status TODO → IN_PROGRESS by @alice: claimed by @alice\n": "@alice",
		"- a: status TODO → IN_PROGRESS by @alice: claimed by @alice\n- b: status IN_PROGRESS → TODO\n- c: status TODO → IN_PROGRESS by @lead: claimed by @bob.x\n": "@bob.x",
		"Taken, claimed by @carol.": "@carol",
		"claimed by @ (nobody)":     "",
	} {
		if got := ReadmeHolder([]byte(readme)); got != want {
			t.Errorf("ReadmeHolder(%q) = %q, want %q", readme, got, want)
		}
	}
}
