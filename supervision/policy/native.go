package policy

import "strings"

// NativeCommands are the command globs that every CLI can be told to allow
// by itself (each CLI's package turns them into its own rules: claude's
// settings, gemini's policy file): exact commands (no wildcard), one plain
// command each, allowed by both the workspace policy and the user's
// allowlist, whose risk is within max_risk. Wider globs stay with the
// bridge, which sees every request and applies the full rules (each CLI's
// prefix rules would let through what the risk rules must see, e.g. `git
// push --force` under `git *`). None when the policy asks for everything.
func (p *Policy) NativeCommands() []string {
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
