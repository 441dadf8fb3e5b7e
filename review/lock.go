package review

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"

	"github.com/agentinfra/agentinfra/agenterr"
)

// LockName is the review lock's file in the repository's common git
// directory: one per repository, whatever workspace or worktree the
// command runs in, so that recordings and landings on one repository
// happen one at a time. git itself never reads it.
const LockName = "agentinfra-review.lock"

// lockTimeout bounds the wait for another review command (a landing of a
// large change takes a few seconds; checks run without the lock).
var lockTimeout = 2 * time.Minute

// withLock runs fn holding the review lock of the repository whose common
// git directory is gitDir.
func withLock(ctx context.Context, gitDir string, fn func() error) error {
	path := filepath.Join(gitDir, LockName)
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return &agenterr.Error{Kind: agenterr.Unavailable, Reason: fmt.Sprintf("%s is not a regular file (%s): no agentinfra process holds it; remove it", path, fi.Mode().Type())}
	}
	fl := flock.New(path)
	lctx, cancel := context.WithTimeout(ctx, lockTimeout)
	defer cancel()
	ok, err := fl.TryLockContext(lctx, 5*time.Millisecond)
	if !ok {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &agenterr.Error{Kind: agenterr.Unavailable, Err: err,
			Reason: fmt.Sprintf("could not take the review lock %s within %s: another review command held it all that time; nothing was changed: try again", path, lockTimeout)}
	}
	defer fl.Unlock()
	return fn()
}
