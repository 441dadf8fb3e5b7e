// Package task creates and moves the files around the matrix: the .agent/
// workspace skeleton (init), task folders .agent/tasks/{id}_{slug}/ created
// together with their matrix row, status lines in task READMEs, and archiving.
//
// The CLI and the MCP server both call these functions; they hold no
// presentation logic. Every operation that touches the matrix runs under the
// matrix store's lock, and every operation is all or nothing: when it fails,
// the workspace is left as it was.
package task

import (
	"embed"
	"errors"
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

// Errors callers can test with errors.Is (besides matrix.ErrNotFound and matrix.ErrInvalid).
var (
	ErrNotDone         = errors.New("task is not DONE")
	ErrNoTaskDir       = errors.New("task has no folder")
	ErrAlreadyArchived = errors.New("task is already archived")
	ErrExists          = errors.New("already exists")
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

// RelPath returns p relative to the workspace root with forward slashes, as
// messages and JSON show it.
func RelPath(ws *workspace.Workspace, p string) string {
	rel, err := filepath.Rel(ws.Root, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.ToSlash(p)
	}
	return filepath.ToSlash(rel)
}

// EnvLockTimeout names the environment variable that sets how long a writer
// waits for the matrix lock, as a Go duration ("30s"); the default is
// matrix.DefaultLockTimeout.
const EnvLockTimeout = "AGENTINFRA_LOCK_TIMEOUT"

// store opens the workspace's matrix with its vocabulary (.agent/config.yaml).
func store(ws *workspace.Workspace) (*matrix.Store, error) {
	s, err := matrix.OpenStore(ws)
	if err != nil {
		return nil, err
	}
	if d, err := time.ParseDuration(os.Getenv(EnvLockTimeout)); err == nil && d > 0 {
		s.LockTimeout = d
	}
	return s, nil
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
