package claude

import (
	"encoding/json"
	"slices"

	"github.com/agentinfra/agentinfra/supervision/policy"
)

// readTools are claude's tools that only read.
var readTools = []string{"Read", "Grep", "Glob", "LS", "NotebookRead", "TodoWrite"}

// Settings is the --settings JSON of a supervised claude: its
// permissions.allow rules for what the policy approves and claude can
// express (the bridge sees every other request).
func Settings(p *policy.Policy) string {
	allow := []string{}
	if !p.AskAll {
		for _, t := range p.File.AutoApprove.Tools {
			if slices.Contains(readTools, t) {
				allow = append(allow, t)
			}
		}
		for _, c := range p.NativeCommands() {
			allow = append(allow, "Bash("+c+")")
		}
	}
	b, _ := json.Marshal(map[string]any{"permissions": map[string]any{"allow": allow}})
	return string(b)
}
