// Package workspace locates an agentinfra workspace (a folder holding .agent/)
// and names the paths inside it. Every other package takes a *Workspace so that
// the layout is spelled out in exactly one place.
package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// EnvRoot names the environment variable that overrides workspace discovery.
const EnvRoot = "AGENTINFRA_ROOT"

// ErrNoWorkspace is returned when no .agent/ folder can be found.
var ErrNoWorkspace = errors.New("no agentinfra workspace found")

// Workspace is a repository root that holds an .agent/ folder.
type Workspace struct {
	Root string // absolute, cleaned
}

// New returns the workspace rooted at dir without checking that .agent/ exists.
func New(dir string) (*Workspace, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("resolve workspace root %q: %w", dir, err)
	}
	return &Workspace{Root: abs}, nil
}

// Find resolves the workspace: the explicit root if given, else $AGENTINFRA_ROOT,
// else the nearest ancestor of start that holds .agent/.
func Find(explicit, start string) (*Workspace, error) {
	if explicit == "" {
		explicit = os.Getenv(EnvRoot)
	}
	if explicit != "" {
		ws, err := New(explicit)
		if err != nil {
			return nil, err
		}
		if !isDir(ws.AgentDir()) {
			return nil, fmt.Errorf("%w: %s has no .agent/ folder; run `agentinfra init --root %s` to create one", ErrNoWorkspace, ws.Root, ws.Root)
		}
		return ws, nil
	}
	dir, err := filepath.Abs(start)
	if err != nil {
		return nil, fmt.Errorf("resolve %q: %w", start, err)
	}
	for {
		if isDir(filepath.Join(dir, ".agent")) {
			return &Workspace{Root: dir}, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil, fmt.Errorf("%w in %s or any parent folder; run `agentinfra init` to create one, or pass --root DIR", ErrNoWorkspace, start)
		}
		dir = parent
	}
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func (w *Workspace) AgentDir() string { return filepath.Join(w.Root, ".agent") }
func (w *Workspace) MatrixPath() string {
	return filepath.Join(w.Root, ".agent", "DEVELOPMENT_MATRIX.md")
}
func (w *Workspace) TasksDir() string     { return filepath.Join(w.Root, ".agent", "tasks") }
func (w *Workspace) ArchiveDir() string   { return filepath.Join(w.Root, ".agent", "archive") }
func (w *Workspace) AgentsDir() string    { return filepath.Join(w.Root, ".agent", "agents") }
func (w *Workspace) SkillsDir() string    { return filepath.Join(w.Root, ".agent", "skills") }
func (w *Workspace) TemplatesDir() string { return filepath.Join(w.Root, ".agent", "templates") }
func (w *Workspace) HandoffsDir() string  { return filepath.Join(w.Root, ".agent", "handoffs") }

// ModePath is the system-prompt file of an agent mode.
func (w *Workspace) ModePath(mode string) string { return filepath.Join(w.AgentsDir(), mode+".md") }

// SkillPath is the SKILL.md of a workspace skill.
func (w *Workspace) SkillPath(slug string) string {
	return filepath.Join(w.SkillsDir(), slug, "SKILL.md")
}

// TaskDir finds the task directory .agent/tasks/{id}_* (or .agent/archive/{id}_*
// when archived is true). It returns "" when there is none.
func (w *Workspace) TaskDir(id string, archived bool) string {
	base := w.TasksDir()
	if archived {
		base = w.ArchiveDir()
	}
	matches, _ := filepath.Glob(filepath.Join(base, id+"_*"))
	for _, m := range matches {
		if isDir(m) {
			return m
		}
	}
	return ""
}

// FindTaskDir looks in tasks/ first, then archive/. archived reports where it was found.
func (w *Workspace) FindTaskDir(id string) (dir string, archived bool) {
	if d := w.TaskDir(id, false); d != "" {
		return d, false
	}
	if d := w.TaskDir(id, true); d != "" {
		return d, true
	}
	return "", false
}

// ValidSlug reports why a user-supplied slug or name cannot be used as one path element.
func ValidSlug(s string) error {
	switch {
	case s == "":
		return errors.New("must not be empty")
	case strings.ContainsAny(s, `/\`):
		return errors.New("must not contain '/' or '\\'")
	case strings.Contains(s, ".."):
		return errors.New("must not contain '..'")
	case strings.HasPrefix(s, "."):
		return errors.New("must not start with '.'")
	case strings.ContainsAny(s, "\x00\r\n"):
		return errors.New("must not contain control characters")
	}
	return nil
}

// Resolve turns a user-supplied path (relative to the root, or absolute) into an
// absolute path and refuses any that leaves the workspace, following symlinks.
func (w *Workspace) Resolve(p string) (string, error) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(w.Root, p)
	}
	p = filepath.Clean(p)
	root, err := filepath.EvalSymlinks(w.Root)
	if err != nil {
		return "", fmt.Errorf("resolve workspace root: %w", err)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Errorf("path %q: %w", p, err)
	}
	rel, err := filepath.Rel(root, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("path %q resolves to %s, outside the workspace %s; pass a path inside the workspace", p, real, w.Root)
	}
	return real, nil
}

// EnvGlobalSkills names the environment variable of the global skills folder.
const EnvGlobalSkills = "AGENTINFRA_GLOBAL_SKILLS"

// GlobalSkillsDir is $AGENTINFRA_GLOBAL_SKILLS, else ~/.agent/global_skills.
func GlobalSkillsDir(getenv func(string) string) string {
	if getenv == nil {
		getenv = os.Getenv
	}
	if d := getenv(EnvGlobalSkills); d != "" {
		return d
	}
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".agent", "global_skills")
}

// RelPath returns p relative to the workspace root with forward slashes, as
// messages, records and JSON show it; a path outside the root is returned as
// it is (slash-separated).
func (w *Workspace) RelPath(p string) string {
	rel, err := filepath.Rel(w.Root, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.ToSlash(p)
	}
	return filepath.ToSlash(rel)
}
