package task

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/workspace"
)

// Validate returns the matrix's own diagnostics (matrix.Validate) plus the
// workspace's warnings: modes and skills a row names that do not exist, task
// folders with no row, and IN_PROGRESS or REVIEW tasks with no folder. file
// is the name to print; ws nil checks the file alone; getenv locates the
// global skills folder (nil: os.Getenv).
func Validate(ws *workspace.Workspace, d *matrix.Doc, file string, getenv func(string) string) []matrix.Diagnostic {
	var l *WorkspaceListing
	if ws != nil {
		l = ListWorkspace(ws, getenv)
	}
	return ValidateListed(l, d, file)
}

// WorkspaceListing is what Validate reads of a workspace besides the matrix:
// its modes, its skills (and the global ones) and the names in its tasks and
// archive folders.
type WorkspaceListing struct {
	ws      *workspace.Workspace
	modes   map[string]bool
	skills  map[string]bool
	tasks   []string // names in .agent/tasks/, in the directory's order
	archive []string // names in .agent/archive/
}

// ListWorkspace reads the folders of ws that Validate checks the matrix
// against. It does not need the matrix: a caller can list while it parses
// (listing 4,000 task folders costs half as much as parsing 10,000 rows).
// getenv locates the global skills folder (nil: os.Getenv).
func ListWorkspace(ws *workspace.Workspace, getenv func(string) string) *WorkspaceListing {
	l := &WorkspaceListing{ws: ws, skills: map[string]bool{}}
	l.modes = namesIn(ws.AgentsDir(), func(e os.DirEntry) (string, bool) {
		name, ok := workspace.ModeName(e.Name())
		return name, ok && !e.IsDir()
	})
	for _, dir := range []string{ws.SkillsDir(), workspace.GlobalSkillsDir(getenv)} {
		for s := range namesIn(dir, func(e os.DirEntry) (string, bool) { return e.Name(), workspace.IsSkillFolder(e.Name()) }) {
			if _, err := os.Stat(filepath.Join(dir, s, "SKILL.md")); err == nil {
				l.skills[s] = true
			}
		}
	}
	l.tasks, _ = subdirNames(ws.TasksDir())
	l.archive, _ = subdirNames(ws.ArchiveDir())
	return l
}

// ValidateListed is Validate with the workspace already listed (l nil: the
// file alone).
func ValidateListed(l *WorkspaceListing, d *matrix.Doc, file string) []matrix.Diagnostic {
	out := matrix.Validate(d, file)
	if l == nil {
		return out
	}
	for _, w := range workspaceWarnings(l, d) {
		if w.File == "" {
			w.File = file
		}
		out = append(out, w)
	}
	matrix.SortDiagnostics(out)
	return out
}

func workspaceWarnings(l *WorkspaceListing, d *matrix.Doc) []matrix.Diagnostic {
	var out []matrix.Diagnostic
	ws := l.ws
	modes, skills := knownNames{set: l.modes}, knownNames{set: l.skills}
	// The folders first, so that the rows are read once: hasFolder is indexed
	// by row (RowRef.Index), not a map of every folder by ID.
	hasFolder := make([]bool, d.NumTasks())
	// hasID answers TaskFolderID and keeps the task row it found: each
	// folder's ID is looked up once.
	found := -1
	hasID := func(id string) bool {
		if found = d.TaskIndex(id); found >= 0 {
			return true
		}
		return d.HasID(id) // a row that could not be read
	}
	type orphan struct{ id, name string }
	var orphans []orphan
	for _, name := range l.tasks {
		found = -1
		id, known := matrix.TaskFolderID(name, hasID)
		if id == "" {
			continue
		}
		if known && found >= 0 {
			hasFolder[found] = true
		} else if !matrix.IsBatchFolder(name, d.HasTask) && isDir(ws.TasksDir(), name) { // a folder of dated work is not a task's folder
			orphans = append(orphans, orphan{id, name})
		}
	}
	for _, name := range l.archive {
		found = -1
		if _, known := matrix.TaskFolderID(name, hasID); known && found >= 0 {
			hasFolder[found] = true
		}
	}
	// The workspace's words for IN_PROGRESS and REVIEW ("" when it has none:
	// no row matches).
	inProgress, _ := WorkflowStatus(d.Vocabulary(), StatusInProgress)
	review, _ := WorkflowStatus(d.Vocabulary(), StatusReview)
	for r := range d.RowRefs() {
		if mode := r.Mode; mode != "" && !modes.has(mode) {
			if _, ok := workspace.ModeName(mode + ".md"); !ok && workspace.ValidSlug(mode) == nil {
				out = append(out, d.WarnAt(r, matrix.ColMode, "mode \""+mode+"\" is not a mode: README.md and files starting with '_' or '.' in .agent/agents/ are notes; fix the Mode"))
			} else {
				out = append(out, d.WarnAt(r, matrix.ColMode, "mode \""+mode+"\" has no .agent/agents/"+mode+".md; create it or fix the Mode"))
			}
		}
		for rest := r.Skills; rest != ""; {
			s, tail, _ := strings.Cut(rest, ",")
			rest = tail
			if s = strings.TrimSpace(s); s != "" && !skills.has(s) {
				out = append(out, d.WarnAt(r, matrix.ColSkills, "skill \""+s+"\" has no .agent/skills/"+s+"/SKILL.md (nor a global one); create it or fix the Skills"))
			}
		}
		if (r.Status == inProgress || r.Status == review) && matrix.ValidID(r.ID) && !hasFolder[r.Index] {
			out = append(out, d.WarnAt(r, matrix.ColStatus, "task "+r.ID+" is "+r.Status+" but has no folder .agent/tasks/"+r.ID+"_*; run `agentinfra task scaffold "+r.ID+"` to create it, or restore it"))
		}
	}
	out = append(out, workflowWarnings(d.Vocabulary())...)
	// Folders with no row, by name (sorting only these, not every folder,
	// matters with thousands of folders).
	sort.Slice(orphans, func(i, j int) bool { return orphans[i].name < orphans[j].name })
	for _, o := range orphans {
		msg := "task folder .agent/tasks/" + o.name + " has no row in the matrix: if it is task " + o.id + "'s folder, the row is missing (add it, or archive the folder); a folder of other work (a batch of fixes, notes) can stay as it is"
		if line := d.UnreadRowLine(o.id); line > 0 {
			// Its row is there but could not be read: a new row would be a
			// second one.
			msg = fmt.Sprintf("task folder .agent/tasks/%s belongs to task %s, whose row (line %d) could not be read; repair that row (see its error), do not add another", o.name, o.id, line)
		}
		out = append(out, matrix.Diagnostic{Line: 1, Col: 1, Severity: matrix.SeverityWarning, Message: msg})
	}
	return out
}

// knownNames is a set of names with a small cache of the names found in
// front of its map: a matrix's 10,000 rows name a handful of modes and
// skills, and a map look-up for each of their cells cost more than the
// rest of the row's checks.
type knownNames struct {
	set    map[string]bool
	recent [64]string
}

func (k *knownNames) has(s string) bool {
	if s == "" {
		return k.set[s]
	}
	slot := &k.recent[(len(s)*31+int(s[0])+int(s[len(s)-1]))%len(k.recent)]
	if *slot == s {
		return true
	}
	if k.set[s] {
		*slot = s
		return true
	}
	return false
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

// workflowWarnings says, at the config's statuses list (its path from the
// workspace root), which workflow
// statuses its vocabulary has no word for: claim, dispatch and the fleet
// would refuse to move a task there, and a pre-commit hook is the place to
// learn it, not an agent's first run.
func workflowWarnings(v *matrix.Vocabulary) []matrix.Diagnostic {
	if v.Source() == "" {
		return nil // the defaults have every word
	}
	var out []matrix.Diagnostic
	for _, st := range []string{StatusTodo, StatusInProgress, StatusReview, StatusBlocked, StatusDone} {
		if _, err := WorkflowStatus(v, st); err != nil {
			out = append(out, matrix.Diagnostic{File: v.Source(), Line: max(v.StatusesLine(), 1), Col: 1,
				Severity: matrix.SeverityWarning, Message: err.Error()})
		}
	}
	return out
}
