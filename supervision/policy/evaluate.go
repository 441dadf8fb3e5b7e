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
}

// shellTools and writeTools are tool names whose calls are judged by the
// command and write rules, never by the tools list.
var shellTools = []string{"Bash", "run_shell_command", "shell", "exec_command", "shell_command", "execute"}
var writeTools = []string{"Edit", "Write", "MultiEdit", "NotebookEdit", "write_file", "replace", "apply_patch", "edit"}

// Evaluate decides whether a can run without asking.
func (p *Policy) Evaluate(a Action) Verdict {
	as := Assess(p.Root, a)
	v := Verdict{Risk: as.Risk, Why: as.Why}
	if p.AskAll {
		v.Rule = "the policy file does not parse: every action asks"
		return v
	}
	maxRisk := p.File.AutoApprove.MaxRisk
	if maxRisk == "" {
		maxRisk = RiskLow
	}
	if !RiskAtMost(as.Risk, maxRisk) {
		v.Rule = fmt.Sprintf("risk %s is above auto_approve.max_risk %s (%s)", as.Risk, maxRisk, strings.Join(as.Why, "; "))
		return v
	}
	aa := p.File.AutoApprove
	switch a.Kind {
	case KindCommand:
		pc := parseCommand(a.Command)
		if pc.Dynamic || len(pc.Cmds) == 0 {
			v.Rule = "the command has parts only a shell can expand"
			return v
		}
		var rules []string
		for _, c := range pc.Cmds {
			s := c.String()
			g := anyGlob(aa.Commands, s)
			if g == "" {
				v.Rule = fmt.Sprintf("no auto_approve.commands glob matches %q", s)
				return v
			}
			if u := anyGlob(p.Allowlist.Commands, s); u == "" {
				v.Rule = fmt.Sprintf("%q matches the workspace's %q but not the user's allowlist", s, g)
				return v
			}
			rules = append(rules, "commands: "+g)
		}
		v.Auto, v.Rule = true, strings.Join(slices.Compact(rules), ", ")
	case KindEdit, KindRead:
		rel := Rel(p.Root, a.File)
		if rel == "" {
			v.Rule = "the file is outside the workspace"
			return v
		}
		pats, key := aa.Read, "read"
		if a.Kind == KindEdit {
			pats, key = aa.Write, "write"
		}
		for _, pat := range pats {
			if ok, _ := doublestar.Match(pat, rel); ok {
				v.Auto, v.Rule = true, key+": "+pat
				return v
			}
		}
		v.Rule = fmt.Sprintf("no auto_approve.%s pattern matches %s", key, rel)
	default:
		if slices.Contains(shellTools, a.Tool) || slices.Contains(writeTools, a.Tool) {
			v.Rule = a.Tool + " is judged by the command and write rules"
			return v
		}
		if slices.Contains(aa.Tools, a.Tool) {
			v.Auto, v.Rule = true, "tools: "+a.Tool
			return v
		}
		v.Rule = "tool " + a.Tool + " is not in auto_approve.tools"
	}
	return v
}
