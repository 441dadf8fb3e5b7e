package config

import (
	"net/url"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Console is the console section:
//
//	console:
//	  url: https://agents.example.com   # the console as people reach it
//
// URL is where people open the console (behind their proxy, or
// http://127.0.0.1:7780 on one machine); the surfaces that cannot know it
// — Slack — link to it from there ("" when not set: they link nowhere).
type Console struct {
	// URL is absolute, http or https, without a trailing slash, a query,
	// a fragment or credentials.
	URL string
}

// Console is the console section.
func (c *Config) Console() (Console, error) { return c.console, c.sections["console"] }

func (d decoder) consoleSection(n *yaml.Node) (Console, error) {
	var c Console
	err := d.mapping(n, "console", []string{"url"}, func(key string, _, v *yaml.Node) error {
		w, err := d.word(v, "console.url", "https://agents.example.com")
		if err != nil {
			return err
		}
		u, err := url.Parse(w)
		switch {
		case err != nil, u.Scheme != "http" && u.Scheme != "https", u.Host == "":
			return d.badValue(v, "console.url", "must be the console's address as people open it, http or https, e.g. https://agents.example.com")
		case u.User != nil:
			// Slack messages carry it: a password would be posted.
			return d.badValue(v, "console.url", "must not carry credentials: people sign in to the console with its token")
		case u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
			return d.badValue(v, "console.url", "must be the console's root, without a query or fragment: links add the page's path to it")
		}
		c.URL = strings.TrimRight(w, "/")
		return nil
	})
	return c, err
}

// Link is the console page whose path is segments (review, 3f9a2c) under the
// console's URL, each segment escaped; "" when no URL is set.
func (c Console) Link(segments ...string) string {
	if c.URL == "" {
		return ""
	}
	var b strings.Builder
	b.WriteString(c.URL)
	for _, s := range segments {
		b.WriteString("/")
		b.WriteString(url.PathEscape(s))
	}
	return b.String()
}
