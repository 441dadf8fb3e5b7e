package task

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/workspace"
)

// ScaffoldOptions tunes ScaffoldTask.
type ScaffoldOptions struct {
	// Slug names the folder {id}_{slug}; "" derives it from the description.
	Slug string
}

// ScaffoldTask creates the folder .agent/tasks/{id}_{slug}/ of an existing
// row (README.md from the template, tracking/, artifacts/), for rows added by
// hand or by another tool. It changes no row. It refuses, writing nothing, an
// unknown ID (matrix.ErrNotFound) and a task that already has a folder in
// tasks/ or archive/ (a *agenterr.Error matching ErrExists, naming it). Like CreateTask it works under
// the matrix lock and builds the folder under a temporary name.
func ScaffoldTask(ctx context.Context, ws *workspace.Workspace, id string, o ScaffoldOptions, now time.Time) (matrix.Task, string, error) {
	if err := workspace.ValidSlug(id); err != nil {
		return matrix.Task{}, "", &agenterr.Error{Kind: agenterr.Invalid, Field: "id", Value: id, Reason: err.Error()}
	}
	if o.Slug != "" {
		if err := ValidateSlug(o.Slug); err != nil {
			return matrix.Task{}, "", err
		}
	}
	tmpl, err := LoadTemplate(ws)
	if err != nil {
		return matrix.Task{}, "", err
	}
	var (
		task     matrix.Task
		dir      string
		tasksDir = ws.TasksDir()
		op       = newOp(ws)
	)
	defer op.flush(ctx)
	// Modify holds the lock while fn runs and writes nothing: fn leaves the
	// matrix as it is.
	st, err := op.store()
	if err != nil {
		return matrix.Task{}, "", err
	}
	_, err = st.ModifyThen(ctx, func(d *matrix.Doc) error {
		op.recoverChange(d)
		t, ok := d.Task(id)
		if !ok {
			return d.NotFound(id)
		}
		if existing, archived := Folder(ws, d, id); existing != "" {
			if archived {
				return &agenterr.Error{Kind: agenterr.Conflict, Field: "id", Err: ErrExists, Reason: fmt.Sprintf("task %s is archived in %s; nothing was written", id, ws.RelPath(existing))}
			}
			return &agenterr.Error{Kind: agenterr.Conflict, Field: "id", Err: ErrExists, Reason: fmt.Sprintf("task %s already has a folder, %s; nothing was written", id, ws.RelPath(existing))}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		slug := o.Slug
		if slug == "" {
			slug = Slugify(taskTitle(t.Description)) // the first line: "<br>" makes no slug
		}
		final := filepath.Join(tasksDir, t.ID+"_"+slug)
		if exists(final) {
			return folderExists(final)
		}
		if err := op.record(change{Op: "create", ID: t.ID, Dir: relSlash(ws, final), MadeTasks: !exists(tasksDir)}); err != nil {
			return err
		}
		if _, err := placeTaskDir(tasksDir, final, renderReadme(tmpl, t, slug, matrix.Today(now))); err != nil {
			return err
		}
		task, dir = t, final
		if testHookPlaced != nil {
			return testHookPlaced()
		}
		return nil
	}, op.finish)
	if err != nil {
		return matrix.Task{}, "", err
	}
	publishTask(ws, task.ID, "folder", ActorFrom(ctx))
	return task, dir, nil
}

// testHookPlaced, when set, runs after ScaffoldTask placed the folder; an
// error simulates a failure after it.
var testHookPlaced func() error

// placeTaskDir builds the task folder final under tasksDir (creating
// tasksDir when missing, then madeTasks is true). Call it under the lock,
// after recording the change (op.record): undoing it is the journal's job.
func placeTaskDir(tasksDir, final, readme string) (madeTasks bool, err error) {
	if !exists(tasksDir) {
		if err := os.MkdirAll(tasksDir, 0o755); err != nil {
			return false, fmt.Errorf("create %s: %w", tasksDir, err)
		}
		madeTasks = true
	}
	// Temporary folders exist only while their writer holds the lock, so
	// any found now belong to a writer that was killed: remove them.
	removeBuilding(tasksDir)
	if err := buildTaskDir(tasksDir, final, readme); err != nil {
		if madeTasks {
			_ = os.Remove(tasksDir)
		}
		return false, err
	}
	return madeTasks, nil
}
