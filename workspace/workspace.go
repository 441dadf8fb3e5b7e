// Package workspace locates an agentinfra workspace (a folder holding .agent/)
// and names the paths inside it. Every other package takes a *Workspace so that
// the layout is spelled out in exactly one place.
//
// A Workspace also carries what every service of the process shares about
// it: the caller's environment (Getenv) and its config file, decoded once
// (Config). Build one per process (the CLI's factory, the MCP server's
// caller) and hand the same one to every service.
package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/config"
	"github.com/agentinfra/agentinfra/internal/regularfile"
)

// EnvRoot names the environment variable that overrides workspace discovery.
const EnvRoot = "AGENTINFRA_ROOT"

// ErrOutside is a path that resolves outside the workspace.
var ErrOutside = agenterr.New(agenterr.Invalid, "path outside the workspace")

// ErrNoWorkspace is returned when no .agent/ folder can be found.
var ErrNoWorkspace = agenterr.New(agenterr.NotFound, "no agentinfra workspace found")

// Workspace is a repository root that holds an .agent/ folder.
type Workspace struct {
	Root string // absolute, cleaned
	// Getenv is the environment of the services that work on the
	// workspace, the caller's (nil: an empty environment). Services read it
	// here, never os.Getenv.
	Getenv func(string) string

	cfg *configOnce // nil in a Workspace not made by New or Find: Config reads the file on every call
}

// configOnce holds the decoded config file.
type configOnce struct {
	once sync.Once
	cfg  *config.Config
	err  error
}

// New returns the workspace rooted at dir without checking that .agent/ exists.
func New(dir string) (*Workspace, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("resolve workspace root %q: %w", dir, err)
	}
	return &Workspace{Root: abs, cfg: &configOnce{}}, nil
}

// Config returns the workspace's config file, .agent/config.yaml, with
// every section decoded: read (through ReadFile) on the first call, the
// same value after. A missing file is the defaults; a file that is not YAML
// is an error on every call.
func (w *Workspace) Config() (*config.Config, error) {
	read := func(p string) ([]byte, error) { return w.ReadFileMax(p, regularfile.MaxConfigBytes) }
	if w.cfg == nil {
		return config.Load(w.Root, w.Getenv, read)
	}
	w.cfg.once.Do(func() { w.cfg.cfg, w.cfg.err = config.Load(w.Root, w.Getenv, read) })
	return w.cfg.cfg, w.cfg.err
}

// Find resolves the workspace: the explicit root if given, else the nearest
// ancestor of start that holds .agent/. The caller reads $AGENTINFRA_ROOT
// (EnvRoot) and passes it as explicit; from says where explicit came from
// ("--root", "$AGENTINFRA_ROOT"), for the error that it is no folder.
func Find(explicit, from, start string) (*Workspace, error) {
	if explicit != "" {
		ws, err := New(explicit)
		if err != nil {
			return nil, err
		}
		if !isDir(ws.Root) {
			// init would fail there too: do not advise it.
			if from == "" {
				from = "--root"
			}
			return nil, fmt.Errorf("%w: %s (from %s) is not a folder; pass the folder of your repository", ErrNoWorkspace, ws.Root, from)
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
			return &Workspace{Root: dir, cfg: &configOnce{}}, nil
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

// ConfigPath is the workspace config file, .agent/config.yaml.
func (w *Workspace) ConfigPath() string { return filepath.Join(w.Root, filepath.FromSlash(config.Rel)) }

// ModePath is the system-prompt file of an agent mode.
func (w *Workspace) ModePath(mode string) string { return filepath.Join(w.AgentsDir(), mode+".md") }

// SkillPath is the SKILL.md of a workspace skill.
func (w *Workspace) SkillPath(slug string) string {
	return filepath.Join(w.SkillsDir(), slug, "SKILL.md")
}

// TaskDirs lists the folders {id}_{slug} of task id in .agent/tasks/ (or
// .agent/archive/ when archived is true), sorted: the one place a task's
// folder is looked up. owner, when not nil, names the task a folder belongs
// to, or "" when it cannot tell (the task package answers with
// matrix.TaskFolderID over the matrix's IDs), so that with rows ISSUE and
// ISSUE_003 the folder ISSUE_003_login is not ISSUE's; a folder is skipped
// only when owner names another task. nil takes every {id}_* folder.
func (w *Workspace) TaskDirs(id string, archived bool, owner func(folder string) string) []string {
	base := w.TasksDir()
	if archived {
		base = w.ArchiveDir()
	}
	matches, _ := filepath.Glob(filepath.Join(base, id+"_*"))
	var out []string
	for _, m := range matches {
		if o := ownerOf(owner, filepath.Base(m)); o != "" && o != id {
			continue
		}
		if isDir(m) {
			out = append(out, m)
		}
	}
	sort.Strings(out)
	return out
}

func ownerOf(owner func(string) string, name string) string {
	if owner == nil {
		return ""
	}
	return owner(name)
}

// FindTaskDir looks in tasks/ first, then archive/, without the matrix (see
// TaskDirs; task.Folder knows the matrix's IDs). archived reports where it
// was found; dir is "" when there is none.
func (w *Workspace) FindTaskDir(id string) (dir string, archived bool) {
	return w.findTaskDir(id, nil)
}

func (w *Workspace) findTaskDir(id string, owner func(string) string) (string, bool) {
	if d := w.TaskDirs(id, false, owner); len(d) > 0 {
		return d[0], false
	}
	if d := w.TaskDirs(id, true, owner); len(d) > 0 {
		return d[0], true
	}
	return "", false
}

// FindTaskDirOwned is FindTaskDir with TaskDirs' owner rule.
func (w *Workspace) FindTaskDirOwned(id string, owner func(folder string) string) (dir string, archived bool) {
	return w.findTaskDir(id, owner)
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

// Resolve turns a path (relative to the root, or absolute) into an absolute
// path, its symlinks followed, and refuses (ErrOutside) any that leaves the
// workspace — or, given also, every one of those folders (the global skills
// folder, for a skill). It is the one check every path from input or from a
// symlink goes through before anything reads it.
func (w *Workspace) Resolve(p string, also ...string) (string, error) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(w.Root, p)
	}
	p = filepath.Clean(p)
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Errorf("path %q: %w", p, err)
	}
	for _, dir := range append([]string{w.Root}, also...) {
		if dir == "" {
			continue
		}
		root, err := filepath.EvalSymlinks(dir)
		if err != nil {
			if dir == w.Root {
				return "", fmt.Errorf("resolve workspace root: %w", err)
			}
			continue
		}
		if rel, err := filepath.Rel(root, real); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return real, nil
		}
	}
	where := w.Root + " is the workspace"
	if len(also) > 0 {
		where += "; " + strings.Join(also, ", ") + " allowed too"
	}
	return "", fmt.Errorf("%w: %s resolves to %s (%s); replace the symlink with the file, or pass a path inside the workspace", ErrOutside, w.RelPath(p), real, where)
}

// ReadFile reads a regular file of the workspace: p (relative to the root,
// or absolute), its symlinks followed, must resolve inside the workspace or
// inside one of also (Resolve). Every reader of a workspace file that goes
// to a person or an agent (a task README, a mode file, a SKILL.md, a
// template, the config) reads through it, so that a symlink a cloned
// repository ships (README.md → /etc/passwd) is refused with ErrOutside,
// never read. A missing file is fs.ErrNotExist, as from os.ReadFile; a folder,
// a FIFO or a device is refused.
func (w *Workspace) ReadFile(p string, also ...string) ([]byte, error) {
	return w.ReadFileMax(p, -1, also...)
}

// ReadFileMax is ReadFile refusing a file of more than max bytes
// (regularfile.ErrTooLarge; max < 0: no limit). The config file is read
// with regularfile.MaxConfigBytes.
func (w *Workspace) ReadFileMax(p string, max int64, also ...string) ([]byte, error) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(w.Root, p)
	}
	if _, err := os.Lstat(p); err != nil {
		return nil, err
	}
	real, err := w.Resolve(p, also...)
	if err != nil {
		return nil, err
	}
	// The open file is checked, not the path: a FIFO swapped in after a
	// check must not hang the read.
	b, err := regularfile.Read(real, max)
	switch {
	case errors.Is(err, regularfile.ErrNotRegular):
		return nil, fmt.Errorf("%s is not a regular file", w.RelPath(p))
	case errors.Is(err, regularfile.ErrTooLarge):
		return nil, fmt.Errorf("%s: %w: shorten it (if it is a link: point it at the file you meant)", w.RelPath(p), err)
	}
	return b, err
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
