package task

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/skills"
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
	// Force skips the check that Mode and Skills exist in the workspace.
	Force bool
	// Getenv locates the global skills folder; nil means os.Getenv.
	Getenv func(string) string
}

// CreateTask adds a TODO row to the matrix and scaffolds its folder
// .agent/tasks/{id}_{slug}/ (README.md from the workspace template or the
// embedded one, tracking/, artifacts/). It is all or nothing: the folder is
// built under a temporary name and renamed into place under the matrix lock,
// and removed again if the matrix cannot be written. It returns the new row
// and the folder's absolute path.
func CreateTask(ctx context.Context, ws *workspace.Workspace, o CreateOptions, now time.Time) (matrix.Task, string, error) {
	desc := strings.TrimSpace(o.Description)
	if desc == "" {
		return matrix.Task{}, "", fmt.Errorf("%w: a task needs a description", matrix.ErrInvalid)
	}
	slug := o.Slug
	if slug == "" {
		slug = Slugify(desc)
	} else if err := ValidateSlug(slug); err != nil {
		return matrix.Task{}, "", err
	}
	skillList := cleanList(o.Skills)
	if !o.Force {
		if err := CheckRefs(ws, o.Getenv, o.Mode, skillList); err != nil {
			return matrix.Task{}, "", err
		}
	}
	tmpl, err := LoadTemplate(ws)
	if err != nil {
		return matrix.Task{}, "", err
	}
	var (
		task       matrix.Task
		dir        string // final folder, once renamed into place
		madeTasks  bool   // this call created .agent/tasks/
		tasksDir   = ws.TasksDir()
		agentsList = cleanList(o.Agents)
	)
	s, err := store(ws)
	if err != nil {
		return matrix.Task{}, "", err
	}
	_, err = s.Modify(ctx, func(d *matrix.Doc) error {
		id, err := newID(ws, d, now)
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
		if madeTasks, err = placeTaskDir(tasksDir, final, renderReadme(tmpl, t, slug, matrix.Today(now))); err != nil {
			return err
		}
		task, dir = t, final
		if testHookBeforeWrite != nil {
			return testHookBeforeWrite()
		}
		return nil
	})
	if err != nil {
		if dir != "" {
			_ = os.RemoveAll(dir)
		}
		if madeTasks {
			_ = os.Remove(tasksDir) // only if still empty
		}
		return matrix.Task{}, "", err
	}
	return task, dir, nil
}

// tmpPrefix names task folders under construction (hidden, never a task ID).
const tmpPrefix = ".creating-"

// buildTaskDir writes the folder under a temporary name and renames it to final.
func buildTaskDir(parent, final, readme string) (err error) {
	if exists(final) {
		return fmt.Errorf("%w: %s; pick another --slug or remove it", ErrExists, final)
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
func newID(ws *workspace.Workspace, d *matrix.Doc, now time.Time) (string, error) {
	return d.NewID(now, func(id string) bool {
		dir, _ := ws.FindTaskDir(id)
		return dir != ""
	}, randRead)
}

// LoadTemplate returns .agent/templates/unified_task.md, or the embedded
// template when the workspace has none.
func LoadTemplate(ws *workspace.Workspace) (string, error) {
	p := filepath.Join(ws.TemplatesDir(), filepath.Base(TemplateRel))
	b, err := os.ReadFile(p)
	if err == nil {
		return string(b), nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return DefaultTemplate(), nil
	}
	return "", fmt.Errorf("read task template: %w", err)
}

// CheckRefs refuses a mode with no .agent/agents/{mode}.md and skills with no
// SKILL.md in the workspace or global skills folder, listing the valid ones.
// Empty mode and skills are fine, and so is a mode without a file that rows
// of the matrix already use (real files name modes `code` or `agent`, and
// validate warns about them): the check is there to catch typos.
func CheckRefs(ws *workspace.Workspace, getenv func(string) string, mode string, skillList []string) error {
	if mode = strings.TrimSpace(mode); mode != "" {
		modes := skills.ModeNames(ws)
		if !slices.Contains(modes, mode) && !modeInUse(ws, mode) {
			return unknownRef("mode", mode, modes, "create .agent/agents/"+mode+".md")
		}
	}
	if len(skillList) == 0 {
		return nil
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	known := skills.NewLibrary(ws, getenv).Slugs()
	for _, s := range skillList {
		if !slices.Contains(known, s) {
			return unknownRef("skill", s, known, "create .agent/skills/"+s+"/SKILL.md")
		}
	}
	return nil
}

func unknownRef(kind, v string, valid []string, create string) error {
	msg := fmt.Sprintf("unknown %s %q", kind, v)
	if s := matrix.Suggest(v, valid); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, ", ") + "?"
	}
	if len(valid) > 0 {
		msg += fmt.Sprintf("; valid %ss: %s", kind, strings.Join(valid, ", "))
	} else {
		msg += fmt.Sprintf("; the workspace has no %ss yet", kind)
	}
	return fmt.Errorf("%w: %s; %s first, or pass --force to use it anyway", matrix.ErrInvalid, msg, create)
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

// modeInUse reports whether a row of the workspace's matrix has this Mode.
func modeInUse(ws *workspace.Workspace, mode string) bool {
	src, err := os.ReadFile(ws.MatrixPath())
	if err != nil {
		return false
	}
	return len(matrix.Query{Mode: mode, Limit: 1}.Select(src)) > 0
}
