package claude

import "encoding/json"

// Settings is the --settings JSON of a supervised claude: an `ask` rule for
// every tool ("*"), which beats every allow rule of every settings source,
// permission mode and allow-hook (verified with claude 2.1.330, issue 27):
// every tool call reaches can_use_tool, and the bridge answers it by the
// policy — a call the policy allows is allowed at once. No allow rules are
// given: claude's prefix rules would let through what the risk rules must
// see, and its defaults (Read, read-only Bash) skip the policy altogether.
//
// Nothing of the person's own settings.json is carried over (with
// --setting-sources "" none is loaded: a file an earlier agent run could
// have written must not decide): its env and apiKeyHelper do not apply;
// credentials are not settings (ANTHROPIC_API_KEY, the login in
// .credentials.json), and the model is passed with --model.
func Settings() string {
	b, _ := json.Marshal(map[string]any{"permissions": map[string]any{"ask": []string{"*"}}})
	return string(b)
}
