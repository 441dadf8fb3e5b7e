package matrix

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// ErrNoPrevious: the matrix has no previous version (it was never written
// by this version of agentinfra).
var ErrNoPrevious = errors.New("no previous version of the matrix")

// Previous returns the previous version of the matrix (PrevPath), the file
// as it was before the last write; ErrNoPrevious when there is none.
func (s *Store) Previous() ([]byte, error) {
	target, err := s.Target()
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(prevPathOf(target))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s does not exist", ErrNoPrevious, prevPathOf(target))
	}
	return b, err
}

// Restore puts the previous version back, as a write like any other (under
// the lock, checked, atomic): the version it replaces becomes the previous
// version, so a second Restore undoes the first. It returns the matrix as
// restored and the bytes it replaced; when the two versions are the same
// nothing is written. The restored version is not checked for errors: it
// was the matrix once, and bringing it back is the point.
func (s *Store) Restore(ctx context.Context) (restored *Doc, replaced []byte, err error) {
	d, err := s.modify(ctx, func(d *Doc) error {
		prev, err := s.Previous()
		if err != nil {
			return err
		}
		replaced = append([]byte(nil), d.src...)
		*d = *ParseWith(prev, s.Vocab)
		return nil
	}, nil, false)
	return d, replaced, err
}
