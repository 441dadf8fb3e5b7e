package config

import "go.yaml.in/yaml/v3"

// Slack is the slack section:
//
//	slack:
//	  channel: C0123456789          # where sessions post (a session may name its own)
//	  users:                        # agentinfra user → Slack member ID
//	    ana: U0123ANA
//	    bo: U0456BO
//	  escalation_mention: "<!channel>"   # sent with a stall escalation
//	  inline_diff_lines: 20         # longer diffs are uploaded as a file
//
// Values are as written; package slack fills the defaults.
type Slack struct {
	Channel           string
	Users             map[string]string
	EscalationMention string
	InlineDiffLines   int
}

var slackKeys = []string{"channel", "users", "escalation_mention", "inline_diff_lines"}

func (d decoder) slack(n *yaml.Node) (Slack, error) {
	var s Slack
	err := d.mapping(n, "slack", slackKeys, func(key string, _, v *yaml.Node) error {
		var err error
		switch key {
		case "channel":
			s.Channel, err = d.word(v, "slack.channel", "C0123456789")
		case "escalation_mention":
			s.EscalationMention, err = d.word(v, "slack.escalation_mention", `"<!channel>"`)
		case "inline_diff_lines":
			s.InlineDiffLines, err = d.count(v, "slack.inline_diff_lines", 1, "20")
		case "users":
			if v.Kind != yaml.MappingNode {
				return d.bad(v, "slack.users", "must map people to Slack member IDs, e.g. {ana: U0123ANA}")
			}
			s.Users = map[string]string{}
			for i := 0; i+1 < len(v.Content); i += 2 {
				uk, uv := v.Content[i], v.Content[i+1]
				id, err := d.word(uv, "slack.users."+uk.Value, "U0123ANA")
				if err != nil {
					return err
				}
				s.Users[uk.Value] = id
			}
		}
		return err
	})
	return s, err
}
