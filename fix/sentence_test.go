package fix

import "testing"

func TestFirstSentence(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Fix the export. It breaks on big vaults\nmore", "Fix the export."},
		{"Bump `v0.14.2` deps\n1. step", "Bump `v0.14.2` deps"},
		{"Why? Because `a. b` said so", "Why?"},
		{"Keep `a. b` whole. Then", "Keep `a. b` whole."},
		{"  Ends with a dot.  \nnext", "Ends with a dot."},
		{"Unclosed ` tick. Then", "Unclosed ` tick."},
	}
	for _, tt := range tests {
		if got := FirstSentence(tt.in); got != tt.want {
			t.Errorf("FirstSentence(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
