package policy

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// nativeCommands are the command globs that every CLI can be told to allow
// by itself: exact commands (no wildcard), one plain command each, allowed
// by both the workspace policy and the user's allowlist, whose risk is
// within max_risk. Wider globs stay with the bridge, which sees every
// request and applies the full rules (each CLI's prefix rules would let
// through what the risk rules must see, e.g. `git push --force` under
// `git *`).
func (p *Policy) nativeCommands() []string {
	if p.AskAll {
		return nil
	}
	var out []string
	for _, g := range p.File.AutoApprove.Commands {
		if strings.ContainsAny(g, "*?") {
			continue
		}
		if v := p.Evaluate(Action{Kind: KindCommand, Command: g}); v.Auto {
			out = append(out, strings.TrimSpace(g))
		}
	}
	return out
}

// claudeReadTools are claude's tools that only read.
var claudeReadTools = []string{"Read", "Grep", "Glob", "LS", "NotebookRead", "TodoWrite"}

// ClaudeSettings is the --settings JSON for claude: its permissions.allow
// rules for what the policy approves and claude can express.
func (p *Policy) ClaudeSettings() string {
	allow := []string{}
	if !p.AskAll {
		for _, t := range p.File.AutoApprove.Tools {
			if slices.Contains(claudeReadTools, t) {
				allow = append(allow, t)
			}
		}
		for _, c := range p.nativeCommands() {
			allow = append(allow, "Bash("+c+")")
		}
	}
	b, _ := json.Marshal(map[string]any{"permissions": map[string]any{"allow": allow}})
	return string(b)
}

// geminiReadTools are gemini's tools that only read.
var geminiReadTools = []string{"read_file", "read_many_files", "glob", "grep_search", "search_file_content", "list_directory"}

// GeminiPolicyTOML is a gemini policy file (--policy) allowing what the
// policy approves and gemini can express; "" when there is nothing.
func (p *Policy) GeminiPolicyTOML() string {
	if p.AskAll {
		return ""
	}
	var b strings.Builder
	rule := func(tool, extra string) {
		fmt.Fprintf(&b, "[[rule]]\ntoolName = %q\n%sdecision = \"allow\"\npriority = 500\n\n", tool, extra)
	}
	for _, t := range p.File.AutoApprove.Tools {
		if slices.Contains(geminiReadTools, t) {
			rule(t, "")
		}
	}
	for _, c := range p.nativeCommands() {
		rule("run_shell_command", fmt.Sprintf("commandRegex = %q\n", "^"+regexp.QuoteMeta(c)+"$"))
	}
	return b.String()
}

// Codex is codex app-server's thread settings: approvalPolicy "untrusted"
// (everything codex does not know to be safe asks; the bridge then applies
// the policy), sandbox "danger-full-access" (what a person or the policy
// approved runs as asked; writes are judged by the write rules).
func (p *Policy) Codex() (approvalPolicy, sandbox string) {
	return "untrusted", "danger-full-access"
}
