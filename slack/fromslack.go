package slack

import (
	"strings"
)

// Text from Slack (a steering message, a reject reason, a refinement, a
// nudge's message, a slash command's arguments) arrives in Slack's
// encoding: & < > as &amp; &lt; &gt;, and a mention, a channel or a link as
// <@U…>, <#C…|name>, <http://x|label>. The agent gets what the person
// typed, as they saw it: plainText decodes both.

// plainText is text from Slack as the person wrote it: a member as @name
// (the agentinfra user linked to them, else their ID), a channel as
// #name, a link as its URL (its label first when it has another one),
// a special mention as @here, then the entities decoded, once.
func (c Config) plainText(text string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(text, '<')
		if i < 0 {
			break
		}
		j := strings.IndexByte(text[i:], '>')
		if j < 0 {
			break
		}
		b.WriteString(decodeEntities(text[:i]))
		b.WriteString(c.token(text[i+1 : i+j]))
		text = text[i+j+1:]
	}
	b.WriteString(decodeEntities(text))
	return b.String()
}

// token is the plain text of one <…> of Slack's.
func (c Config) token(t string) string {
	target, label, hasLabel := strings.Cut(t, "|")
	label = decodeEntities(label)
	switch {
	case strings.HasPrefix(target, "@"):
		if hasLabel && label != "" {
			return "@" + strings.TrimPrefix(label, "@")
		}
		if name, ok := c.person(target[1:]); ok {
			return "@" + name
		}
		return target
	case strings.HasPrefix(target, "#"):
		if hasLabel && label != "" {
			return "#" + strings.TrimPrefix(label, "#")
		}
		return target
	case strings.HasPrefix(target, "!"):
		// <!here>, <!channel>, <!everyone>, <!subteam^S…|@team>, <!date^…|fallback>
		if hasLabel && label != "" {
			return label
		}
		name, _, _ := strings.Cut(target[1:], "^")
		return "@" + name
	}
	url := decodeEntities(target)
	if !hasLabel || label == "" || label == url || label == strings.TrimPrefix(strings.TrimPrefix(url, "mailto:"), "tel:") ||
		strings.HasSuffix(url, "://"+label) {
		return strings.TrimPrefix(url, "mailto:")
	}
	return label + " (" + url + ")"
}

// decodeEntities undoes Slack's escaping of & < >, in one pass (so that
// "&amp;lt;" is "&lt;", as typed).
var decodeEntities = strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">").Replace
