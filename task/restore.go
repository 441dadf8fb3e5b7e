package task

import (
	"context"

	"github.com/agentinfra/agentinfra/workspace"
)

// Restored is what RestorePrevious did, or would do.
type Restored struct {
	// Current is the matrix as it is (before a restore), Previous the
	// version before the last write.
	Current, Previous []byte
	// Warnings are what the store noticed on the way.
	Warnings []string
}

// PreviousVersion reads the matrix and its previous version (every write
// keeps the file it replaced as .agent/.DEVELOPMENT_MATRIX.md.prev), writing
// nothing; matrix.ErrNoPrevious when there is none.
func PreviousVersion(ctx context.Context, ws *workspace.Workspace) (Restored, error) {
	s, err := OpenStore(ws)
	if err != nil {
		return Restored{}, err
	}
	d, err := s.Load(ctx)
	if err != nil {
		return Restored{}, err
	}
	prev, err := s.Previous()
	if err != nil {
		return Restored{}, err
	}
	return Restored{Current: d.Bytes(), Previous: prev}, nil
}

// RestorePrevious puts the previous version of the matrix back, under the
// lock like any write; the version it replaces becomes the previous version,
// so restoring twice undoes the first restore. It is how an edit that was
// overwritten (by agentinfra or by an editor) is brought back.
func RestorePrevious(ctx context.Context, ws *workspace.Workspace) (Restored, error) {
	op := newOp(ws)
	s, err := op.store()
	if err != nil {
		return Restored{}, err
	}
	d, replaced, err := s.Restore(ctx)
	if err != nil {
		op.flush(ctx)
		return Restored{}, err
	}
	return Restored{Current: replaced, Previous: d.Bytes(), Warnings: op.notices}, nil
}
