package fleet

import (
	"strings"

	"github.com/agentinfra/agentinfra/agenterr"
)

// MaxNameLen is the longest agent name.
const MaxNameLen = 20

// ValidateName checks an agent name: 1–20 letters, digits and single
// hyphens, not leading or trailing.
func ValidateName(name string) error {
	const rule = "use 1–20 letters, digits and single hyphens, not at the start or end (e.g. papi, web-2)"
	if name == "" {
		return agenterr.Invalidf("name", "the agent name is empty: %s", rule)
	}
	if len(name) > MaxNameLen {
		return agenterr.Invalidf("name", "agent name %q is %d characters long: %s", name, len(name), rule)
	}
	for i, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case r == '-':
			if i == 0 || i == len(name)-1 || name[i-1] == '-' {
				return agenterr.Invalidf("name", "agent name %q has a leading, trailing or double hyphen: %s", name, rule)
			}
		default:
			return agenterr.Invalidf("name", "agent name %q contains %q: %s", name, r, rule)
		}
	}
	return nil
}

// Key is the case-insensitive identity of a name (its folder name).
func Key(name string) string { return strings.ToLower(name) }
