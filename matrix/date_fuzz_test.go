package matrix

import "testing"

// FuzzValidDate checks the unrolled validDate against the plain reading of
// YYYY-MM-DD it replaced.
func FuzzValidDate(f *testing.F) {
	for _, s := range []string{"2026-01-20", "2024-02-29", "2023-02-29", "2026-13-01", "2026-00-10", "0000-01-01", "2026-1-020", "2026/01/20", "2026-01-2a", "9999-12-31", "２026-01-20"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := len(s) == 10 && s[4] == '-' && s[7] == '-' && realDate(digits(s, 0, 4), digits(s, 5, 7), digits(s, 8, 10))
		if got := validDate(s); got != want {
			t.Errorf("validDate(%q) = %v, want %v", s, got, want)
		}
	})
}
