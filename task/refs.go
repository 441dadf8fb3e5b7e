package task

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/skills"
	"github.com/agentinfra/agentinfra/workspace"
)

// CheckRefs checks what a task names in the workspace. A mode with no
// .agent/agents/{mode}.md is a warning (real matrices name modes `code` or
// `agent` that have no file; validate warns about them too), with close
// names. A skill with no SKILL.md in the workspace or the global skills
// folder is refused, unless force: a Refused *agenterr.Error with Field
// "skills" and Override "force", listing the valid ones. Empty mode and
// skills are fine.
func CheckRefs(ws *workspace.Workspace, getenv func(string) string, mode string, skillList []string, force bool) (warnings []string, err error) {
	if mode = strings.TrimSpace(mode); mode != "" {
		modes := skills.ModeNames(ws)
		if !slices.Contains(modes, mode) {
			w := fmt.Sprintf("mode %q has no .agent/agents/%s.md", mode, mode)
			if s := matrix.Suggest(mode, modes); len(s) > 0 {
				w += "; did you mean " + strings.Join(s, ", ") + "?"
			} else if len(modes) > 0 {
				w += "; modes: " + strings.Join(modes, ", ")
			}
			warnings = append(warnings, w+"; the task was written with it")
		}
	}
	if len(skillList) == 0 || force {
		return warnings, nil
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	known := skills.NewLibrary(ws, getenv).Slugs()
	for _, s := range skillList {
		if !slices.Contains(known, s) {
			return warnings, unknownSkill(s, known)
		}
	}
	return warnings, nil
}

func unknownSkill(v string, valid []string) error {
	msg := fmt.Sprintf("unknown skill %q", v)
	if s := matrix.Suggest(v, valid); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, ", ") + "?"
	}
	if len(valid) > 0 {
		msg += "; valid skills: " + strings.Join(valid, ", ")
	} else {
		msg += "; the workspace has no skills yet"
	}
	msg += "; create .agent/skills/" + v + "/SKILL.md first"
	return &agenterr.Error{Kind: agenterr.Refused, Reason: msg, Field: "skills", Override: "force"}
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
