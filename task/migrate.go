package task

import (
	"context"
	"time"

	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/workspace"
)

// Migrate converts the matrix's older Item tables into one task table (see
// matrix.Doc.Migrate). It holds the matrix lock and replaces the file atomically;
// nothing is written when it fails.
func Migrate(ctx context.Context, ws *workspace.Workspace, now time.Time) (matrix.Migration, error) {
	// The converted table is written in the default words: no vocabulary,
	// and a config migrate cannot use is no reason to refuse it.
	s := matrix.NewStore(ws.MatrixPath())
	s.Root = ws.Root
	if c, err := ws.Config(); err == nil && c.LockTimeout > 0 {
		s.LockTimeout = c.LockTimeout
	}
	// Refuse before locking: the lock file appears with the first write, and
	// a refused migrate must leave the folder as it was.
	d, err := s.Load(ctx)
	if err != nil {
		return matrix.Migration{}, err
	}
	if _, err := d.Migrate(now); err != nil {
		return matrix.Migration{}, err
	}
	var m matrix.Migration
	_, err = s.Modify(ctx, func(d *matrix.Doc) error {
		var err error
		m, err = d.Migrate(now)
		return err
	})
	return m, err
}
