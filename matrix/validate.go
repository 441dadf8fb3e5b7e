package matrix

import (
	"strings"
)

// Validate returns the file's own diagnostics (Deps naming unknown tasks or
// making a cycle included), each named file, in line order. A file with no
// task table is an error (issue 19): an emptied matrix, an older-format one,
// a file that is no matrix at all — every reader would find no task in it,
// and a CI job or a commit must not pass it. A task table with no rows (what
// init writes) is fine. Checks against the workspace (modes, skills, task
// folders) are the task package's.
func Validate(d *Doc, file string) []Diagnostic {
	out := append(d.Diagnostics(), d.DependencyDiagnostics()...)
	out = append(out, d.controlDiagnostics()...)
	if err, ok := d.RequireTaskTable().(*NoTaskTableError); ok {
		msg := err.Explain(migrateAdvice)
		if len(strings.TrimSpace(d.str)) == 0 {
			msg = "the matrix is empty, so it has no task table and no task: restore it (from git: git checkout -- " + file + "), or write a task table into it (agentinfra init writes one into a missing matrix)"
		}
		out = append(out, Diagnostic{Line: 1, Col: 1, Severity: SeverityError, Message: msg})
	}
	for i := range out {
		out[i].File = file
	}
	sortDiagnostics(out)
	return out
}

// SortDiagnostics orders diagnostics by file, line and column.
func SortDiagnostics(ds []Diagnostic) { sortDiagnostics(ds) }

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
	if i < 0 || i >= int(r.nc) {
		return ""
	}
	c := r.tbl.slab[int(r.c0)+i]
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
