package slack

import (
	"strings"

	"github.com/agentinfra/agentinfra/config"
	"github.com/agentinfra/agentinfra/supervision"
	"github.com/agentinfra/agentinfra/workspace"
)

// Config is the slack section of .agent/config.yaml (config.Slack, decoded
// and checked with every other section, once per workspace) as this
// package reads it: with its defaults, and the people it names.
type Config config.Slack

// Defaults.
const (
	DefaultInlineDiffLines   = 20
	DefaultEscalationMention = "<!channel>"
)

// LoadConfig is the workspace's slack section (ws.Config), with the
// defaults filled in. A wrong section is an Invalid error naming the file,
// the line, the column and the key.
func LoadConfig(ws *workspace.Workspace) (Config, error) {
	wc, err := ws.Config()
	if err != nil {
		return Config{}, err
	}
	c, err := wc.Slack()
	if err != nil {
		return Config{}, err
	}
	return Config(c).withDefaults(), nil
}

func (c Config) withDefaults() Config {
	if c.InlineDiffLines <= 0 {
		c.InlineDiffLines = DefaultInlineDiffLines
	}
	if c.EscalationMention == "" {
		c.EscalationMention = DefaultEscalationMention
	}
	return c
}

// person is the agentinfra user a Slack member is (config's users), and
// whether the member is known at all.
func (c Config) person(slackID string) (string, bool) {
	for name, id := range c.Users {
		if id == slackID {
			return strings.TrimPrefix(name, "@"), true
		}
	}
	return "", false
}

// mention is how Slack writes a person: <@U…> when the member is known,
// else @name as plain text (a name is not ours: an owner is whoever ran
// the session).
func (c Config) mention(name string) string {
	if id, ok := c.memberOf(name); ok {
		return "<@" + id + ">"
	}
	return c.handle(name)
}

// handle is a person as plain text, never a mention: @name.
func (c Config) handle(name string) string {
	return inert(supervision.Handle(name), oneLine, 100)
}

// memberOf is the Slack member linked to an agentinfra user.
func (c Config) memberOf(name string) (string, bool) {
	n := strings.TrimPrefix(name, "@")
	if id, ok := c.Users[n]; ok {
		return id, true
	}
	id, ok := c.Users["@"+n]
	return id, ok
}
