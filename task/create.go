package task

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/workspace"
)

// CreateOptions describes a new task. Empty Priority, Difficulty mean P2, med.
type CreateOptions struct {
	Description string
	Mode        string
	Priority    string
	Difficulty  string
	Skills      []string
	Agents      []string // "@name" or "name"
	// Slug names the folder {id}_{slug}; "" derives it from Description (see Slugify).
	Slug string
	// Extra fills extra matrix columns by header name.
	Extra map[string]string
	// Force accepts skills that do not exist in the workspace (yet).
	Force bool
	// Getenv locates the global skills folder; nil means os.Getenv.
	Getenv func(string) string
	// Actor is who creates the task ("" = the actor of ctx, see WithActor).
	Actor Actor
}

// Created is what CreateTask made.
type Created struct {
	Task matrix.Task
	// Dir is the task folder's absolute path.
	Dir string
	// Warnings are things to look at that did not stop the change (a mode
	// with no file).
	Warnings []string
}

// CreateTask adds a TODO row to the matrix and scaffolds its folder
// .agent/tasks/{id}_{slug}/ (README.md from the workspace template or the
// embedded one, tracking/, artifacts/). It is all or nothing: the folder is
// built under a temporary name and renamed into place under the matrix lock,
// and removed again if the matrix cannot be written, or, if the process is
// killed before the row is written, by the next operation (see JournalRel).
// Values are checked by the matrix (typed errors); a mode or skill with no
// file that no row uses yet is refused unless Force (see CheckRefs).
func CreateTask(ctx context.Context, ws *workspace.Workspace, o CreateOptions, now time.Time) (Created, error) {
	desc := strings.TrimSpace(o.Description)
	if desc == "" {
		return Created{}, &agenterr.Error{Kind: agenterr.Invalid, Field: "description", Reason: "a task needs a description"}
	}
	slug := o.Slug
	if slug == "" {
		slug = Slugify(desc)
	} else if err := ValidateSlug(slug); err != nil {
		return Created{}, err
	}
	skillList := cleanList(o.Skills)
	warnings, err := CheckRefs(ws, o.Getenv, o.Mode, skillList, o.Force)
	if err != nil {
		return Created{}, err
	}
	tmpl, err := LoadTemplate(ws)
	if err != nil {
		return Created{}, err
	}
	var (
		task       matrix.Task
		dir        string // final folder, once renamed into place
		tasksDir   = ws.TasksDir()
		agentsList = cleanList(o.Agents)
		op         = newOp(ws)
	)
	s, err := op.store()
	if err != nil {
		return Created{}, err
	}
	_, err = s.ModifyThen(ctx, func(d *matrix.Doc) error {
		// A leftover of a killed create, or this call's own folder when the
		// matrix changed under it and this runs again.
		op.recoverChange(d)
		task, dir = matrix.Task{}, ""
		id, err := newID(ctx, ws, d, now)
		if err != nil {
			return err
		}
		t, err := d.CreateTask(matrix.Task{
			ID: id, Description: desc, Mode: strings.TrimSpace(o.Mode),
			Priority: o.Priority, Difficulty: o.Difficulty,
			Skills: skillList, Agents: agentsList, Extra: o.Extra,
		}, now)
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		final := filepath.Join(tasksDir, t.ID+"_"+slug)
		if exists(final) {
			return folderExists(final)
		}
		// The record first: a process killed from here until the row is
		// written leaves a folder that the next writer removes.
		if err := op.record(change{Op: "create", ID: t.ID, Dir: relSlash(ws, final), MadeTasks: !exists(tasksDir)}); err != nil {
			return err
		}
		if _, err = placeTaskDir(tasksDir, final, renderReadme(tmpl, t, slug, matrix.Today(now))); err != nil {
			return err
		}
		task, dir = t, final
		if testHookBeforeWrite != nil {
			return testHookBeforeWrite()
		}
		return nil
	}, op.finish)
	if err != nil {
		op.flush(ctx)
		return Created{}, err
	}
	publishTask(ws, task.ID, "created", o.Actor.or(ctx))
	return Created{Task: task, Dir: dir, Warnings: append(warnings, op.notices...)}, nil
}

func folderExists(final string) error {
	return &agenterr.Error{Kind: agenterr.Conflict, Reason: fmt.Sprintf("%s already exists; pick another slug or remove it", final), Field: "slug", Err: ErrExists}
}

// tmpPrefix names task folders under construction (hidden, never a task ID).
const tmpPrefix = ".creating-"

// buildTaskDir writes the folder under a temporary name and renames it to final.
func buildTaskDir(parent, final, readme string) (err error) {
	if exists(final) {
		return folderExists(final)
	}
	tmp, err := os.MkdirTemp(parent, tmpPrefix)
	if err != nil {
		return fmt.Errorf("create task folder in %s: %w", parent, err)
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("create task folder: %w", err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "README.md"), []byte(readme), 0o644); err != nil {
		return fmt.Errorf("write task README: %w", err)
	}
	for _, sub := range []string{"tracking", "artifacts"} {
		if err := os.Mkdir(filepath.Join(tmp, sub), 0o755); err != nil {
			return fmt.Errorf("create task folder: %w", err)
		}
	}
	if err := os.Rename(tmp, final); err != nil {
		return fmt.Errorf("create task folder %s: %w", final, err)
	}
	return nil
}

// testHookBeforeWrite, when set, runs after the folder is in place and
// before the matrix is written; an error simulates a failed matrix write.
var testHookBeforeWrite func() error

// randRead is swapped in tests.
var randRead = rand.Read

// newID picks an ID in the matrix's convention (see matrix.Doc.NewID) used
// neither by a row nor by a folder in tasks/ or archive/.
//
// Numbered IDs (TASK-12) are the same on two branches that each add a task:
// those of every other local branch head and worktree are taken too.
func newID(ctx context.Context, ws *workspace.Workspace, d *matrix.Doc, now time.Time) (string, error) {
	var elsewhere map[string]bool // read once, at the first ID tried
	return d.NewID(now, func(id string) bool {
		if dir, _ := Folder(ws, d, id); dir != "" {
			return true
		}
		if elsewhere == nil {
			elsewhere = map[string]bool{}
			if d.NumberedIDs() {
				elsewhere = IDsElsewhere(ctx, ws)
			}
		}
		return elsewhere[id]
	}, randRead)
}

// LoadTemplate returns .agent/templates/unified_task.md, or the embedded
// template when the workspace has none.
func LoadTemplate(ws *workspace.Workspace) (string, error) {
	p := filepath.Join(ws.TemplatesDir(), filepath.Base(TemplateRel))
	b, err := ws.ReadFile(p)
	if err == nil {
		return string(b), nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return DefaultTemplate(), nil
	}
	return "", fmt.Errorf("read task template: %w", err)
}
