package policy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Verdict is the policy's answer for an action.
type Verdict struct {
	// Auto: approved without a person.
	Auto bool
	Risk string
	// Rule is the rule that approved it (for the audit log), or why a
	// person is asked.
	Rule string
	Why  []string
	// Paths are the action's files as a person reads them, resolved
	// ("docs/gitdir/config → .git/config").
	Paths []string
}

// Detail is what the audit log records of a verdict: a caller records it
// under the action "policy_allowed" when Auto (the policy let the CLI go
// ahead), and records what the CLI then did (it ran the tool, or refused
// it) as its own event — never "auto_approved" for a tool that did not run.
func (v Verdict) Detail() map[string]any {
	d := map[string]any{"auto": v.Auto, "risk": v.Risk, "rule": v.Rule}
	if len(v.Why) > 0 {
		d["why"] = v.Why
	}
	if len(v.Paths) > 0 {
		d["paths"] = v.Paths
	}
	return d
}

// shellTools and writeTools are tool names whose calls are judged by the
// command and write rules, never by the tools list.
var shellTools = []string{"Bash", "run_shell_command", "shell", "exec_command", "shell_command", "execute"}
var writeTools = []string{"Edit", "Write", "MultiEdit", "NotebookEdit", "write_file", "replace", "apply_patch", "edit"}

// In is the policy for an agent that works in dir (a fleet agent's
// worktree): the same rules, its paths judged relative to dir — the
// worktree's .git, .agent/config.yaml and .agent/policy.yaml are its
// control files, and the workspace's own (outside dir) are outside.
// dir "" is p itself.
func (p *Policy) In(dir string) *Policy {
	if p == nil || dir == "" || dir == p.Root {
		return p
	}
	q := *p
	q.Root = dir
	return &q
}

// MaxRisk is the highest risk the policy may auto-approve: the lower of
// the workspace's auto_approve.max_risk and the user's allowlist's max_risk
// (low when the allowlist does not say, or there is none). Critical is
// never auto-approved, whatever both say.
func (p *Policy) MaxRisk() string {
	ws, user := p.File.AutoApprove.MaxRisk, p.Allowlist.MaxRisk
	if ws == "" {
		ws = RiskLow
	}
	if user == "" {
		user = RiskLow
	}
	m := ws
	if RiskAtMost(user, ws) {
		m = user
	}
	if m == RiskCritical {
		m = RiskHigh
	}
	return m
}

// Evaluate decides whether a can run without asking: the action's risk is
// at most MaxRisk, nothing in it is never auto-approved (a path outside the
// worktree, in .git or a control file), and a rule of the workspace policy
// and a rule of the user's allowlist of the same kind both match it — a
// workspace policy only narrows what the allowlist allows.
func (p *Policy) Evaluate(a Action) Verdict {
	as := p.Assess(a)
	v := Verdict{Risk: as.Risk, Why: as.Why, Paths: as.Paths}
	if p.AskAll {
		v.Rule = "the policy file does not parse: every action asks"
		return v
	}
	if as.Never != "" {
		v.Rule = "never auto-approved: " + as.Never
		return v
	}
	if maxRisk := p.MaxRisk(); !RiskAtMost(as.Risk, maxRisk) {
		v.Rule = fmt.Sprintf("risk %s is above max_risk %s (%s)", as.Risk, maxRisk, strings.Join(as.Why, "; "))
		if as.Risk == RiskCritical {
			v.Rule = fmt.Sprintf("critical is never auto-approved (%s)", strings.Join(as.Why, "; "))
		}
		return v
	}
	aa, user := p.File.AutoApprove, p.Allowlist
	switch a.Kind {
	case KindCommand:
		pc := parseCommand(a.Command)
		if pc.Dynamic || len(pc.Cmds) == 0 {
			v.Rule = "the command has parts only a shell can expand"
			return v
		}
		var rules []string
		for _, c := range pc.Cmds {
			g := anyGlob(aa.Commands, c)
			if g == "" {
				v.Rule = fmt.Sprintf("no auto_approve.commands glob matches %s", c)
				return v
			}
			if u := anyGlob(user.Commands, c); u == "" {
				v.Rule = fmt.Sprintf("%s matches the workspace's %q but not the user's allowlist (commands)", c, g)
				return v
			}
			rules = append(rules, "commands: "+g)
		}
		v.Auto, v.Rule = true, strings.Join(slices.Compact(rules), ", ")
	case KindEdit, KindRead:
		pats, upats, key := aa.Read, user.Read, "read"
		if a.Kind == KindEdit {
			pats, upats, key = aa.Write, user.Write, "write"
		}
		var rules []string
		for _, f := range append([]string{a.File}, a.Files...) {
			if f == "" && len(a.Files) > 0 {
				continue
			}
			rel := p.Place(f).Rel
			pat := matchPattern(pats, rel)
			if pat == "" {
				v.Rule = fmt.Sprintf("no auto_approve.%s pattern matches %s", key, rel)
				return v
			}
			if matchPattern(upats, rel) == "" {
				v.Rule = fmt.Sprintf("%s matches the workspace's %s: %s but not the user's allowlist (%s)", rel, key, pat, key)
				return v
			}
			rules = append(rules, key+": "+pat)
		}
		v.Auto, v.Rule = true, strings.Join(slices.Compact(rules), ", ")
	default:
		if slices.Contains(shellTools, a.Tool) || slices.Contains(writeTools, a.Tool) {
			v.Rule = a.Tool + " is judged by the command and write rules"
			return v
		}
		if !slices.Contains(aa.Tools, a.Tool) {
			v.Rule = "tool " + a.Tool + " is not in auto_approve.tools"
			return v
		}
		if !slices.Contains(user.Tools, a.Tool) {
			v.Rule = "tool " + a.Tool + " is in the workspace's auto_approve.tools but not the user's allowlist (tools)"
			return v
		}
		v.Auto, v.Rule = true, "tools: "+a.Tool
	}
	return v
}

// matchPattern is the first file pattern (doublestar, worktree-relative)
// matching rel, the resolved path; "" when none does.
func matchPattern(pats []string, rel string) string {
	for _, pat := range pats {
		if ok, _ := doublestar.Match(pat, rel); ok {
			return pat
		}
	}
	return ""
}
