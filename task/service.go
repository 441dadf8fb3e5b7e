// Package task is the one place a task is created, changed, claimed,
// archived: every entry point (the CLI, the MCP server, dispatch, migrate)
// goes through it, and nothing else writes the matrix.
//
// Each operation takes the matrix lock (matrix.Store.Modify, waiting up to
// $AGENTINFRA_LOCK_TIMEOUT), reads the matrix, changes it and its side
// effects together, and is all or nothing: a task's row and its folder
// .agent/tasks/{id}_{slug}/ are created together, a status change and its
// line in the task README's status log are written together, a claim is a
// compare-and-set. When an operation fails, the workspace is left as it was;
// when its process is killed between two files, the journal it wrote first
// (JournalRel) makes the next operation roll it back and say so.
//
// Errors are typed (matrix.InvalidError, matrix.NotFoundError,
// matrix.RefusedError, and the sentinels below through errors.Is); their
// text names no CLI flag or MCP parameter: each adapter renders Field and
// Override in its own words. Results carry Warnings (e.g. a mode with no
// .agent/agents/{mode}.md) that adapters show without failing.
//
// The package also owns the .agent/ skeleton (Init), the task README
// template, and the workspace checks of validate (Validate).
package task

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/workspace"
)

// skeleton mirrors .agent/: the files init writes and the default task template.
//
//go:embed all:skeleton
var skeleton embed.FS

// Errors callers can test with errors.Is (besides matrix.ErrNotFound,
// matrix.ErrInvalid and matrix.ErrRefused, which every refusal also matches).
var (
	ErrNotDone         = errors.New("task is not DONE")
	ErrNoTaskDir       = errors.New("task has no folder")
	ErrAlreadyArchived = errors.New("task is already archived")
	ErrExists          = errors.New("already exists")
	// ErrClaimed is a claim of a task that is not free: RefusedError.Holder names who holds it.
	ErrClaimed = errors.New("task is not claimable")
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
// waits for the matrix lock, as a Go duration ("30s"); the default is
// matrix.DefaultLockTimeout.
const EnvLockTimeout = "AGENTINFRA_LOCK_TIMEOUT"

// LoadVocabulary reads the matrix section of .agent/config.yaml (see
// matrix.ParseVocabularyConfig); a missing file is the default vocabulary.
// Errors wrap matrix.ErrConfig and name the file, line and key.
func LoadVocabulary(ws *workspace.Workspace) (*matrix.Vocabulary, error) {
	path := ws.ConfigPath()
	src, err := ws.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return matrix.DefaultVocabulary(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("read workspace config: %w", err)
	}
	return matrix.ParseVocabularyConfig(ws.RelPath(path), src)
}

// OpenStore returns the store of the workspace's matrix with the workspace's
// vocabulary and the lock timeout of $AGENTINFRA_LOCK_TIMEOUT. Readers may
// use it; writers go through this package's operations.
func OpenStore(ws *workspace.Workspace) (*matrix.Store, error) {
	v, err := LoadVocabulary(ws)
	if err != nil {
		return nil, err
	}
	s := writerStore(matrix.NewStore(ws.MatrixPath()))
	s.Vocab = v
	s.Root = ws.Root
	return s, nil
}

// writerStore is the store of the workspace's matrix for a writer: the lock
// timeout of $AGENTINFRA_LOCK_TIMEOUT, and files of the store's own that git
// does not list (issue 19: in a workspace init did not make, no .gitignore
// names them): the lock, the previous version, versions kept aside after a
// clash with an editor, a write's temporary files, the record of a change
// across files.
func writerStore(s *matrix.Store) *matrix.Store {
	s = withLockTimeout(s)
	s.LockCreated = func(lock string) {
		dir, base := filepath.Dir(lock), strings.TrimSuffix(filepath.Base(lock), ".lock")
		workspace.HideFromGit(lock, s.PrevPath(), filepath.Join(dir, base+".recovered-*"),
			filepath.Join(dir, base+".tmp-*"), filepath.Join(dir, JournalRel))
	}
	return s
}

func withLockTimeout(s *matrix.Store) *matrix.Store {
	if d, err := time.ParseDuration(os.Getenv(EnvLockTimeout)); err == nil && d > 0 {
		s.LockTimeout = d
	}
	return s
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
