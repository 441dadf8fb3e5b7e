package config

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
)

// The review section decodes to its values; a wrong one fails only the
// review section, naming the file, the line and the key.
func TestReviewSection(t *testing.T) {
	cfg, err := Parse(Rel, []byte("review:\n  strategy: rebase\n  checks: [\"go test ./...\", agentinfra validate]\n  check_timeout: 90s\n"), "/repo", nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := cfg.Review()
	if err != nil || r.Strategy != "rebase" || !slices.Equal(r.Checks, []string{"go test ./...", "agentinfra validate"}) || r.CheckTimeout != 90*time.Second {
		t.Errorf("Review() = %+v, %v", r, err)
	}
	if cfg, _ := Parse(Rel, nil, "/repo", nil); cfg != nil {
		if r, err := cfg.Review(); err != nil || r.Strategy != "" || r.Checks != nil {
			t.Errorf("no section: %+v, %v; want the zero values", r, err)
		}
	}
	for _, c := range []struct{ src, mention string }{
		{"review:\n  strategy: octopus\n", ".agent/config.yaml:2:13: review.strategy: use squash, merge or rebase"},
		{"review:\n  checks: go test\n", ".agent/config.yaml:2:11: review.checks: must be a list of commands"},
		{"review:\n  checks: [[go, test]]\n", ".agent/config.yaml:2:12: review.checks: must be a single value"},
		{"review:\n  check_timeout: soon\n", ".agent/config.yaml:2:18: review.check_timeout: use a duration such as 10m"},
		{"review:\n  reviewers: bo\n", ".agent/config.yaml:2:3: review.reviewers: unknown key; the review section takes strategy, checks and check_timeout"},
	} {
		cfg, err := Parse(Rel, []byte(c.src), "/repo", nil)
		if err != nil {
			t.Fatalf("%q: Parse: %v (a section's error is the section's)", c.src, err)
		}
		_, got := cfg.Review()
		if e := agenterr.As(got); !errors.Is(got, ErrConfig) || e == nil || e.Line == 0 || !strings.Contains(got.Error(), c.mention) {
			t.Errorf("%q: %v; want an Invalid ErrConfig mentioning %q", c.src, got, c.mention)
		}
		if _, err := cfg.Fleet(); err != nil {
			t.Errorf("%q: the fleet section fails too: %v", c.src, err)
		}
	}
}
