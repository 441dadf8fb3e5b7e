package matrix

import (
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agentinfra/agentinfra/workspace"
)

// Validate returns the file's own diagnostics plus workspace warnings: modes
// and skills a row names that do not exist, task folders with no row, and
// IN_PROGRESS or REVIEW tasks with no folder. file is the name to print.
func Validate(ws *workspace.Workspace, d *Doc, file string, getenv func(string) string) []Diagnostic {
	out := d.Diagnostics()
	if !d.HasTaskTable() {
		out = append(out, Diagnostic{Line: 1, Col: 1, Severity: SeverityWarning,
			Message: "no task table found (a table whose header has ID and Status columns); add one, e.g. with `agentinfra init`"})
	}
	if ws != nil {
		out = append(out, workspaceWarnings(ws, d, getenv)...)
	}
	for i := range out {
		out[i].File = file
	}
	sortDiagnostics(out)
	return out
}

func workspaceWarnings(ws *workspace.Workspace, d *Doc, getenv func(string) string) []Diagnostic {
	var out []Diagnostic
	modes := namesIn(ws.AgentsDir(), func(e os.DirEntry) (string, bool) {
		return strings.TrimSuffix(e.Name(), ".md"), !e.IsDir() && strings.HasSuffix(e.Name(), ".md")
	})
	skillDirs := []string{ws.SkillsDir(), workspace.GlobalSkillsDir(getenv)}
	skillSet := map[string]bool{}
	for _, dir := range skillDirs {
		for s := range namesIn(dir, func(e os.DirEntry) (string, bool) { return e.Name(), true }) {
			if _, err := os.Stat(filepath.Join(dir, s, "SKILL.md")); err == nil {
				skillSet[s] = true
			}
		}
	}
	taskDirs := dirsByID(ws.TasksDir())
	archived := dirsByID(ws.ArchiveDir())
	warn := func(r *row, col string, format string, a ...any) {
		off := r.span.start
		if i, ok := r.tbl.colIndex[col]; ok && i < len(r.cells) {
			off = int(r.cells[i].text.start)
		}
		d2 := d.diagAt(off, SeverityWarning, format, a...)
		out = append(out, d2)
	}
	// Read the three cells straight from the row: building every Task would
	// cost more than the checks on a large matrix, and so would looking the
	// columns up by name in every row (30,000 map lookups for 10,000 rows).
	var (
		tbl                           *table
		modeCol, skillsCol, statusCol int
	)
	for _, r := range d.rows {
		if r.tbl != tbl {
			tbl = r.tbl
			modeCol, skillsCol, statusCol = tbl.index(ColMode), tbl.index(ColSkills), tbl.index(ColStatus)
		}
		if mode := d.cellAt(r, modeCol); mode != "" && !modes[mode] {
			warn(r, ColMode, "mode %q has no .agent/agents/%s.md; create it or fix the Mode", mode, mode)
		}
		for rest := d.cellAt(r, skillsCol); rest != ""; {
			s, tail, _ := strings.Cut(rest, ",")
			rest = tail
			if s = strings.TrimSpace(s); s != "" && !skillSet[s] {
				warn(r, ColSkills, "skill %q has no .agent/skills/%s/SKILL.md (nor a global one); create it or fix the Skills", s, s)
			}
		}
		status, _ := NormalizeStatus(d.cellAt(r, statusCol))
		if (status == "IN_PROGRESS" || status == "REVIEW") && ValidID(r.id) && len(taskDirs[r.id]) == 0 && len(archived[r.id]) == 0 {
			warn(r, ColStatus, "task %s is %s but has no folder .agent/tasks/%s_*; create it with `agentinfra task create` or restore it", r.id, status, r.id)
		}
	}
	// Folders with no row, by name (sorting only these, not every folder,
	// matters with thousands of folders).
	var orphans []string
	for id, names := range taskDirs {
		if len(d.byID[id]) == 0 {
			orphans = append(orphans, names...)
		}
	}
	sort.Strings(orphans)
	for _, name := range orphans {
		id, _, _ := strings.Cut(name, "_")
		out = append(out, Diagnostic{Line: 1, Col: 1, Severity: SeverityWarning,
			Message: "task folder .agent/tasks/" + name + " has no row in the matrix; add a row for " + id + " or archive the folder"})
	}
	return out
}

func namesIn(dir string, keep func(os.DirEntry) (string, bool)) map[string]bool {
	out := map[string]bool{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return out
	}
	for _, e := range entries {
		if name, ok := keep(e); ok {
			out[name] = true
		}
	}
	return out
}

// dirsByID maps task IDs to the folder names {id}_{slug} under dir, in no
// particular order.
func dirsByID(dir string) map[string][]string {
	names, err := subdirNames(dir)
	out := make(map[string][]string, len(names))
	if err != nil {
		return out
	}
	for _, name := range names {
		if i := strings.IndexByte(name, '_'); i == 6 && ValidID(name[:6]) {
			out[name[:6]] = append(out[name[:6]], name)
		}
	}
	return out
}

// index is the position of a canonical column, -1 when the table has none.
func (t *table) index(col string) int {
	if i, ok := t.colIndex[col]; ok {
		return i
	}
	return -1
}

// cellAt returns the trimmed raw text of a row's i-th cell, or "" when absent.
func (d *Doc) cellAt(r *row, i int) string {
	if i < 0 || i >= len(r.cells) {
		return ""
	}
	c := r.cells[i]
	return d.str[c.text.start:c.text.end]
}
