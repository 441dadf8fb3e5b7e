package policy

import "testing"

// A policy that does not parse is named where it is wrong: FILE:LINE:COL
// of the key or value at fault (issue 30: only the line, or nothing, was
// said before).
func TestParseNamesTheLineAndColumn(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"auto_approve:\n  comands: [a]\n", `.agent/policy.yaml:2:3: unknown key "comands"`},
		{"auto_approve:\n  commands: 3\n", ".agent/policy.yaml:2:13: cannot unmarshal !!int `3` into []string"},
		{"auto_approve:\n  commands: x: y\n", ".agent/policy.yaml:2:3: mapping values are not allowed in this context"},
		{"auto_approve:\n\tcommands: []\n", ".agent/policy.yaml:2:2: found character that cannot start any token"},
	} {
		_, err := Parse(".agent/policy.yaml", []byte(c.src))
		if err == nil || err.Error() != c.want {
			t.Errorf("%q: got %v, want %s", c.src, err, c.want)
		}
	}
}
