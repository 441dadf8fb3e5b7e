package task

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/skills"
	"github.com/agentinfra/agentinfra/workspace"
)

// CheckRefs checks what a task names in the workspace, modes and skills by
// one rule: a name is accepted when it has its file (.agent/agents/{mode}.md;
// a SKILL.md in the workspace or the global skills folder), or when rows of
// the matrix already use it (real matrices name modes `code` or `agent` that
// have no file: the workspace's own words, which validate warns about) with
// a warning; any other name is refused unless force, as a typo would be: a
// Refused *agenterr.Error with Field "mode" or "skills" and Override "force",
// with close names. Empty mode and skills are fine.
func CheckRefs(ws *workspace.Workspace, getenv func(string) string, mode string, skillList []string, force bool) (warnings []string, err error) {
	var used *usedNames // read from the matrix only for a name with no file
	if mode = strings.TrimSpace(mode); mode != "" {
		modes := skills.ModeNames(ws)
		if !slices.Contains(modes, mode) {
			used = usedInMatrix(ws, used)
			if !force && !used.modes[mode] {
				return nil, unknownName("mode", mode, modes, ".agent/agents/"+mode+".md")
			}
			w := fmt.Sprintf("mode %q has no .agent/agents/%s.md", mode, mode)
			if s := matrix.Suggest(mode, modes); len(s) > 0 {
				w += "; did you mean " + strings.Join(s, ", ") + "?"
			} else if len(modes) > 0 {
				w += "; modes: " + strings.Join(modes, ", ")
			}
			warnings = append(warnings, w+"; the task was written with it")
		}
	}
	if len(skillList) == 0 {
		return warnings, nil
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	known := skills.NewLibrary(ws, getenv).Slugs()
	for _, s := range skillList {
		if slices.Contains(known, s) {
			continue
		}
		used = usedInMatrix(ws, used)
		if !force && !used.skills[s] {
			return warnings, unknownName("skill", s, known, ".agent/skills/"+s+"/SKILL.md")
		}
		warnings = append(warnings, fmt.Sprintf("skill %q has no .agent/skills/%s/SKILL.md (nor a global one); the task was written with it", s, s))
	}
	return warnings, nil
}

// usedNames are the modes and skills the matrix's rows name.
type usedNames struct{ modes, skills map[string]bool }

// usedInMatrix reads them once (an unreadable matrix names none).
func usedInMatrix(ws *workspace.Workspace, u *usedNames) *usedNames {
	if u != nil {
		return u
	}
	u = &usedNames{modes: map[string]bool{}, skills: map[string]bool{}}
	st, err := OpenStore(ws)
	if err != nil {
		return u
	}
	d, err := st.Load(context.Background())
	if err != nil {
		return u
	}
	for _, t := range d.Tasks() {
		u.modes[t.Mode] = true
		for _, sk := range t.Skills {
			u.skills[sk] = true
		}
	}
	return u
}

func unknownName(kind, v string, valid []string, file string) error {
	msg := fmt.Sprintf("unknown %s %q", kind, v)
	if s := matrix.Suggest(v, valid); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, ", ") + "?"
	}
	switch {
	case len(valid) > 0:
		msg += fmt.Sprintf("; valid %ss: %s", kind, strings.Join(valid, ", "))
	default:
		msg += fmt.Sprintf("; the workspace has no %ss yet", kind)
	}
	msg += "; create " + file + " first"
	field := "mode"
	if kind == "skill" {
		field = "skills"
	}
	return &agenterr.Error{Kind: agenterr.Refused, Reason: msg, Field: field, Override: "force"}
}

func cleanList(in []string) []string {
	out := []string{}
	for _, s := range in {
		if s = strings.TrimSpace(s); s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
