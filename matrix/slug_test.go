package matrix

import (
	"regexp"
	"testing"
)

// The slug and @mention checks were regexps; the loop that replaced them
// (no regexp to compile at start-up) must accept exactly what they did.
var (
	slugRef    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)
	mentionRef = regexp.MustCompile(`^@[A-Za-z0-9][A-Za-z0-9_.-]*$`)
)

func FuzzValidNameAgreesWithRegexp(f *testing.F) {
	for _, s := range []string{"", "go-testing", "a", "_draft", ".hidden", "a..b", "a.b", "Code_Review-2", "x y", "x\n", "ünï", "-a", "a/b", "@coder", "@", "@@x", " coder", "coder "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := ValidName(s), slugRef.MatchString(s) && !containsDotDot(s); got != want {
			t.Errorf("ValidName(%q) = %v, the regexp says %v", s, got, want)
		}
		v, err := NormalizeMention(s)
		if want := mentionRef.MatchString(v); (err == nil) != want {
			t.Errorf("NormalizeMention(%q) = %q, %v; the regexp accepts %q: %v", s, v, err, v, want)
		}
	})
}

func containsDotDot(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		if s[i] == '.' && s[i+1] == '.' {
			return true
		}
	}
	return false
}
