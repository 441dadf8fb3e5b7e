package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/agenterr"
)

// console.url decodes to the console's root, and links under it escape
// their segments; a URL that is not one people open (no scheme, a query,
// credentials that Slack would post) fails only the console section.
func TestConsoleSection(t *testing.T) {
	cfg, err := Parse(Rel, []byte("console:\n  url: https://agents.example.com/ai/\n"), "/repo", nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := cfg.Console()
	if err != nil || c.URL != "https://agents.example.com/ai" {
		t.Fatalf("Console() = %+v, %v", c, err)
	}
	if got, want := c.Link("review", "3f9a2c"), "https://agents.example.com/ai/review/3f9a2c"; got != want {
		t.Errorf("Link = %s; want %s", got, want)
	}
	if got, want := c.Link("review", "../x?y#z"), "https://agents.example.com/ai/review/..%2Fx%3Fy%23z"; got != want {
		t.Errorf("Link of an odd ID = %s; want %s (one path segment)", got, want)
	}
	if none, _ := Parse(Rel, nil, "/repo", nil); none != nil {
		if c, err := none.Console(); err != nil || c.URL != "" || c.Link("review", "1") != "" {
			t.Errorf("no section: %+v %q, %v; want no URL and no link", c, c.Link("review", "1"), err)
		}
	}
	for _, c := range []struct{ src, mention string }{
		{"console:\n  url: agents.example.com\n", ".agent/config.yaml:2:8: console.url: must be the console's address"},
		{"console:\n  url: ftp://agents.example.com\n", ".agent/config.yaml:2:8: console.url: must be the console's address"},
		{"console:\n  url: https://ana:secret@agents.example.com\n", "console.url: must not carry credentials"},
		{"console:\n  url: https://agents.example.com/?token=1\n", "console.url: must be the console's root, without a query"},
		{"console:\n  address: https://agents.example.com\n", ".agent/config.yaml:2:3: console.address: unknown key; the console section takes url"},
	} {
		cfg, err := Parse(Rel, []byte(c.src), "/repo", nil)
		if err != nil {
			t.Fatalf("%q: Parse: %v (a section's error is the section's)", c.src, err)
		}
		_, got := cfg.Console()
		if e := agenterr.As(got); !errors.Is(got, ErrConfig) || e == nil || e.Line == 0 || !strings.Contains(got.Error(), c.mention) {
			t.Errorf("%q: %v; want an Invalid ErrConfig mentioning %q", c.src, got, c.mention)
		}
		if _, err := cfg.Slack(); err != nil {
			t.Errorf("%q: the slack section fails too: %v", c.src, err)
		}
	}
}
