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
	if err, ok := d.RequireTaskTable().(*NoTaskTableError); ok {
		out = append(out, Diagnostic{Line: 1, Col: 1, Severity: SeverityWarning, Message: err.Explain(migrateAdvice)})
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
		name, ok := workspace.ModeName(e.Name())
		return name, ok && !e.IsDir()
	})
	skillDirs := []string{ws.SkillsDir(), workspace.GlobalSkillsDir(getenv)}
	skillSet := map[string]bool{}
	for _, dir := range skillDirs {
		for s := range namesIn(dir, func(e os.DirEntry) (string, bool) { return e.Name(), workspace.IsSkillFolder(e.Name()) }) {
			if _, err := os.Stat(filepath.Join(dir, s, "SKILL.md")); err == nil {
				skillSet[s] = true
			}
		}
	}
	hasID := func(id string) bool { return d.rowWithID(id) != nil }
	taskDirs := dirsByID(ws.TasksDir(), hasID)
	archived := dirsByID(ws.ArchiveDir(), hasID)
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
		if mode := blankDash(d.cellAt(r, modeCol)); mode != "" && !modes[mode] {
			if _, ok := workspace.ModeName(mode + ".md"); !ok && workspace.ValidSlug(mode) == nil {
				warn(r, ColMode, "mode %q is not a mode: README.md and files starting with '_' or '.' in .agent/agents/ are notes; fix the Mode", mode)
			} else {
				warn(r, ColMode, "mode %q has no .agent/agents/%s.md; create it or fix the Mode", mode, mode)
			}
		}
		for rest := blankDash(d.cellAt(r, skillsCol)); rest != ""; {
			s, tail, _ := strings.Cut(rest, ",")
			rest = tail
			if s = strings.TrimSpace(s); s != "" && !skillSet[s] {
				warn(r, ColSkills, "skill %q has no .agent/skills/%s/SKILL.md (nor a global one); create it or fix the Skills", s, s)
			}
		}
		status, _ := d.vocab.Status(d.cellAt(r, statusCol))
		if (status == "IN_PROGRESS" || status == "REVIEW") && ValidID(r.id) && len(taskDirs[r.id]) == 0 && len(archived[r.id]) == 0 {
			warn(r, ColStatus, "task %s is %s but has no folder .agent/tasks/%s_*; run `agentinfra task scaffold %s` to create it, or restore it", r.id, status, r.id, r.id)
		}
	}
	// Folders with no row, by name (sorting only these, not every folder,
	// matters with thousands of folders).
	hasRow := func(id string) bool { return len(d.byID(id)) > 0 }
	type orphan struct{ id, name string }
	var orphans []orphan
	for id, names := range taskDirs {
		if hasRow(id) {
			continue
		}
		for _, name := range names {
			if !IsBatchFolder(name, hasRow) { // a folder of dated work is not a task's folder
				orphans = append(orphans, orphan{id, name})
			}
		}
	}
	sort.Slice(orphans, func(i, j int) bool { return orphans[i].name < orphans[j].name })
	for _, o := range orphans {
		out = append(out, Diagnostic{Line: 1, Col: 1, Severity: SeverityWarning,
			Message: "task folder .agent/tasks/" + o.name + " has no row in the matrix; add a row for " + o.id + " or archive the folder"})
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

// dirsByID maps task IDs to the folder names {id}_{slug} under dir (see
// TaskFolderID; hasID tells the IDs of the matrix's rows), in no particular
// order.
func dirsByID(dir string, hasID func(string) bool) map[string][]string {
	names, err := subdirNames(dir)
	out := make(map[string][]string, len(names))
	if err != nil {
		return out
	}
	for _, name := range names {
		if id, _ := TaskFolderID(name, hasID); id != "" {
			out[id] = append(out[id], name)
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

// cell returns the trimmed raw text of a row's column, or "" when absent.
func (d *Doc) cell(r *row, col string) string { return d.cellAt(r, r.tbl.index(col)) }

// cellAt returns the trimmed raw text of a row's i-th cell, or "" when absent.
func (d *Doc) cellAt(r *row, i int) string {
	if i < 0 || i >= len(r.cells) {
		return ""
	}
	c := r.cells[i]
	return d.str[c.text.start:c.text.end]
}

// TaskFolderID returns the task ID of a folder named {id}_{slug}: the longest
// prefix before a '_' that is the ID of a row (hasID), so that with rows
// ISSUE and ISSUE_003 the folder ISSUE_003_login is ISSUE_003's. When no row
// claims the folder, id is the part before its first '_' if that is a valid
// ID, and known is false; id is "" when the name has no such prefix.
func TaskFolderID(name string, hasID func(string) bool) (id string, known bool) {
	if hasID != nil {
		for i := min(len(name)-1, MaxIDLen); i > 0; i-- {
			if name[i] == '_' && ValidID(name[:i]) && hasID(name[:i]) {
				return name[:i], true
			}
		}
	}
	if i := strings.IndexByte(name, '_'); i > 0 && ValidID(name[:i]) {
		return name[:i], false
	}
	return "", false
}
