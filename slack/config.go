package slack

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/agentinfra/agentinfra/internal/regularfile"
	"github.com/agentinfra/agentinfra/supervision"
	"github.com/agentinfra/agentinfra/workspace"
)

// Config is the slack section of .agent/config.yaml:
//
//	slack:
//	  channel: C0123456789          # where sessions post (a session may name its own)
//	  users:                        # agentinfra user → Slack member ID
//	    ana: U0123ANA
//	    bo: U0456BO
//	  escalation_mention: "<!channel>"   # sent with a stall escalation
//	  inline_diff_lines: 20         # longer diffs are uploaded as a file
type Config struct {
	Channel           string            `yaml:"channel"`
	Users             map[string]string `yaml:"users"`
	EscalationMention string            `yaml:"escalation_mention"`
	InlineDiffLines   int               `yaml:"inline_diff_lines"`
}

// Defaults.
const (
	DefaultInlineDiffLines   = 20
	DefaultEscalationMention = "<!channel>"
)

// LoadConfig reads the slack section (defaults when missing).
func LoadConfig(ws *workspace.Workspace) (Config, error) {
	var f struct {
		Slack Config `yaml:"slack"`
	}
	b, err := ws.ReadFileMax(ws.ConfigPath(), regularfile.MaxConfigBytes) // as ws.Config reads it
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Config{}, err
	}
	if len(b) > 0 {
		if err := yaml.Unmarshal(b, &f); err != nil {
			return Config{}, fmt.Errorf("%s: slack: %v", ws.ConfigPath(), err)
		}
	}
	return f.Slack.withDefaults(), nil
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
