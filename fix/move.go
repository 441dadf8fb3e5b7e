package fix

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentinfra/agentinfra/internal/atomicfile"
	"github.com/agentinfra/agentinfra/matrix"
	tasksvc "github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// scaffolded are the task folders Run created for Move before it took the
// lock for the matrix, and the rows whose folder could not be created.
type scaffolded struct {
	created map[string]bool   // ID → its README did not exist before Run
	failed  map[string]string // ID → why
}

// movable says whether a continued row's Description can move into its
// task's README, and if not, why.
func movable(cr matrix.ContinuedRow, desc int, count map[string]int) (bool, string) {
	switch {
	case desc < 0 || !strings.Contains(cr.Cells[desc], "\n"):
		return false, "its Description is on one line, so it was joined"
	case cr.ID == "":
		return false, "it has no ID, so no task folder: joined instead of moved"
	case count[cr.ID] > 1:
		return false, fmt.Sprintf("ID %s is on %d rows, so no one task folder: joined instead of moved", cr.ID, count[cr.ID])
	case workspace.ValidSlug(cr.ID) != nil:
		return false, fmt.Sprintf("ID %q cannot name a folder: joined instead of moved", cr.ID)
	}
	return true, ""
}

// scaffoldFolders creates, each with the task scaffold (under the matrix
// lock), the folders of the rows Move will move that have none yet.
func scaffoldFolders(ctx context.Context, ws *workspace.Workspace, st *matrix.Store, o Options) (*scaffolded, error) {
	s := &scaffolded{created: map[string]bool{}, failed: map[string]string{}}
	if o.Mode != Move {
		return s, nil
	}
	d, err := st.Load(ctx)
	if err != nil {
		return nil, err
	}
	count := idCounts(d)
	for _, cr := range d.ContinuedRows() {
		if ok, _ := movable(cr, descriptionIndex(cr), count); !ok {
			continue
		}
		if dir, _ := tasksvc.Folder(ws, d, cr.ID); dir != "" {
			continue
		}
		if _, _, err := tasksvc.ScaffoldTask(ctx, ws, cr.ID, tasksvc.ScaffoldOptions{}, o.Now); err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			s.failed[cr.ID] = fmt.Sprintf("its task folder could not be created (%v): joined instead of moved", err)
			continue
		}
		s.created[cr.ID] = true
	}
	return s, nil
}

func idCounts(d *matrix.Doc) map[string]int {
	count := map[string]int{}
	for _, t := range d.Tasks() {
		count[t.ID]++
	}
	return count
}

// moveTarget returns the README that receives the row's Description, and
// the change to it (nil when it already holds the text verbatim, e.g. from
// a template's {{description}}); or, when the row cannot move, why.
func (r *run) moveTarget(d *matrix.Doc, cr matrix.ContinuedRow, desc int, count map[string]int) (path string, change *FileChange, why string) {
	ws, sc := r.ws, r.sc
	if ok, why := movable(cr, desc, count); !ok {
		return "", nil, why
	}
	if sc != nil && sc.failed[cr.ID] != "" {
		return "", nil, sc.failed[cr.ID]
	}
	var before, existing string
	created := false
	if dir, _ := tasksvc.Folder(ws, d, cr.ID); dir != "" {
		abs := filepath.Join(dir, "README.md")
		b, err := os.ReadFile(abs)
		switch {
		case err == nil:
			existing = string(b)
		case errors.Is(err, fs.ErrNotExist):
			created = true
		default:
			return "", nil, fmt.Sprintf("its README could not be read (%v): joined instead of moved", err)
		}
		path = ws.RelPath(abs)
		before = existing
		if sc != nil && sc.created[cr.ID] {
			before, created = "", true // Run made it: the whole file is new
		}
	} else {
		if !r.o.DryRun {
			return "", nil, "it has no task folder: joined instead of moved"
		}
		// Preview the folder the task scaffold will create.
		t, _ := d.Task(cr.ID)
		slug := tasksvc.Slugify(title(t.Description))
		path = ws.RelPath(filepath.Join(ws.TasksDir(), cr.ID+"_"+slug, "README.md"))
		existing = tasksvc.RenderReadme(r.tmpl, t, slug, matrix.Today(r.o.Now)) // as the scaffold will
		created = true
	}
	text := strings.ReplaceAll(cr.Cells[desc], "\r\n", "\n")
	if strings.Contains(existing, text) {
		if before == existing {
			return path, nil, ""
		}
		return path, &FileChange{Path: path, Created: created, before: before, after: existing}, ""
	}
	after := existing
	if after != "" {
		after = strings.TrimRight(after, "\n") + "\n\n"
	}
	after += r.section(cr, text)
	return path, &FileChange{Path: path, Created: created, before: before, after: after}, ""
}

// section is the README section that holds a moved Description verbatim.
func (r *run) section(cr matrix.ContinuedRow, text string) string {
	return fmt.Sprintf("## Description\n\n_Moved here from `%s` (task %s, lines %d-%d) by `agentinfra validate --fix=move` on %s; the row keeps its first sentence._\n\n%s\n",
		r.matrixRel, cr.ID, cr.Line, cr.EndLine, matrix.Today(r.o.Now), text)
}

// title is the first line of a description, as the task scaffold names the
// folder after it (scaffold.taskTitle).
func title(desc string) string {
	first := desc
	for _, sep := range []string{"<br>", "<br/>", "<br />", "\n"} {
		first, _, _ = strings.Cut(first, sep)
	}
	if first = strings.TrimSpace(first); first == "" {
		return strings.TrimSpace(desc)
	}
	return first
}

// loadTemplate is the task README template, needed only to preview the
// folders a dry run of Move would create.
func loadTemplate(ws *workspace.Workspace, o Options) (string, error) {
	if o.Mode != Move || !o.DryRun {
		return "", nil
	}
	return tasksvc.LoadTemplate(ws)
}

// writeFile writes a README (atomically, keeping its mode); tests swap it to fail.
var writeFile = atomicfile.Write
