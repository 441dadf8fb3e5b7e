package workspace

import "strings"

// ModeName returns the mode that a file in .agent/agents/ defines: "coder"
// for coder.md. README.md (any case) and names starting with '_' or '.' are
// notes, drafts or hidden files next to the modes, not modes.
func ModeName(fileName string) (string, bool) {
	name, ok := strings.CutSuffix(fileName, ".md")
	if !ok || name == "" || strings.EqualFold(name, "README") || hiddenName(name) || ValidSlug(name) != nil {
		return "", false
	}
	return name, true
}

// IsSkillFolder reports whether a folder in a skills folder may hold a skill:
// names starting with '_' or '.' are drafts, templates or hidden folders.
func IsSkillFolder(name string) bool { return !hiddenName(name) && ValidSlug(name) == nil }

func hiddenName(name string) bool {
	return strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".")
}
