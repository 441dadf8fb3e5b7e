// Package task is the one place a task is created, changed, claimed,
// archived: every entry point (the CLI, the MCP server, dispatch, migrate)
// goes through it, and nothing else writes the matrix.
//
// Each operation takes the matrix lock (matrix.Store.Modify, waiting up to
// the workspace config's LockTimeout, $AGENTINFRA_LOCK_TIMEOUT), reads the matrix, changes it and its side
// effects together, and is all or nothing: a task's row and its folder
// .agent/tasks/{id}_{slug}/ are created together, a status change and its
// line in the task README's status log are written together, a claim is a
// compare-and-set. When an operation fails, the workspace is left as it was;
// when its process is killed between two files, the journal it wrote first
// (JournalRel) makes the next operation roll it back and say so.
//
// Errors are *agenterr.Error values (and the sentinels below through
// errors.Is); their text names no CLI flag or MCP parameter: each adapter
// renders Field and Override in its own words. Results carry Warnings (e.g. a mode with no
// .agent/agents/{mode}.md) that adapters show without failing.
//
// The package also owns the .agent/ skeleton (Init), the task README
// template, and the workspace checks of validate (Validate).
package task

import (
	"embed"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/config"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/workspace"
)

// skeleton mirrors .agent/: the files init writes and the default task template.
//
//go:embed all:skeleton
var skeleton embed.FS

// Errors callers can test with errors.Is, besides the kinds' sentinels
// (matrix.ErrNotFound, matrix.ErrInvalid, agenterr.ErrConflict...): each is
// of kind Conflict, the task's state is in the way.
var (
	ErrNotDone         = agenterr.New(agenterr.Conflict, "task is not DONE")
	ErrNoTaskDir       = agenterr.New(agenterr.Conflict, "task has no folder")
	ErrAlreadyArchived = agenterr.New(agenterr.Conflict, "task is already archived")
	ErrExists          = agenterr.New(agenterr.Conflict, "already exists")
	// ErrClaimed is a claim of a task that is not free: the error's Holder names who holds it.
	ErrClaimed = agenterr.New(agenterr.Conflict, "task is not claimable")
)

// TemplateRel is the task README template's path inside .agent/.
const TemplateRel = "templates/unified_task.md"

// DefaultTemplate returns the embedded task README template.
func DefaultTemplate() string {
	b, err := skeleton.ReadFile("skeleton/" + TemplateRel)
	if err != nil {
		panic(err) // embedded at build time
	}
	return string(b)
}

// Skeleton returns the embedded .agent/ skeleton (paths relative to .agent/).
func Skeleton() fs.FS {
	sub, err := fs.Sub(skeleton, "skeleton")
	if err != nil {
		panic(err)
	}
	return sub
}

// EnvLockTimeout names the environment variable that sets how long a writer
// waits for the matrix lock (config.EnvLockTimeout).
const EnvLockTimeout = config.EnvLockTimeout

// LoadVocabulary returns the workspace's vocabulary: the matrix section of
// its config (ws.Config; the default vocabulary without one). Errors are
// agenterr.Invalid, match config.ErrConfig and name the file, line and key.
func LoadVocabulary(ws *workspace.Workspace) (*matrix.Vocabulary, error) {
	c, err := ws.Config()
	if err != nil {
		return nil, err
	}
	return c.Vocabulary()
}

// OpenStore returns the store of the workspace's matrix with the workspace's
// vocabulary and lock timeout (from ws.Config). Readers may use it; writers
// go through this package's operations.
func OpenStore(ws *workspace.Workspace) (*matrix.Store, error) {
	c, err := ws.Config()
	if err != nil {
		return nil, err
	}
	v, err := c.Vocabulary()
	if err != nil {
		return nil, err
	}
	s := writerStore(ws, matrix.NewStore(ws.MatrixPath()))
	s.Vocab = v
	return s, nil
}

// writerStore is the store of the workspace's matrix for a writer: its
// Root, the lock timeout of the workspace's config ($AGENTINFRA_LOCK_TIMEOUT;
// a config the caller cannot use leaves the default), and files of the
// store's own that git does not list (issue 19: in a workspace init did not
// make, no .gitignore names them): the lock, the previous version, versions
// kept aside after a clash with an editor, a write's temporary files, the
// record of a change across files.
func writerStore(ws *workspace.Workspace, s *matrix.Store) *matrix.Store {
	s.Root = ws.Root
	if c, err := ws.Config(); err == nil && c.LockTimeout > 0 {
		s.LockTimeout = c.LockTimeout
	}
	s.LockCreated = func(lock string) {
		dir, base := filepath.Dir(lock), strings.TrimSuffix(filepath.Base(lock), ".lock")
		workspace.HideFromGit(lock, s.PrevPath(), filepath.Join(dir, base+".recovered-*"),
			filepath.Join(dir, base+".tmp-*"), filepath.Join(dir, JournalRel))
	}
	return s
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
