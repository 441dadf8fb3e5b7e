package supervised

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/agentinfra/agentinfra/store"
)

// storeCheckEvery is how often a supervisor checks that its database is
// still the file at its path.
const storeCheckEvery = 250 * time.Millisecond

// watchStore ends the run (stop, with the store's ErrStorage as the
// cause) when its database is deleted or replaced. Without it a deleted
// database stranded the run: the supervisor went on with the deleted
// file, a person's `approve` opened a fresh one and found no request, the
// run waited out its request's timeout (issue 27). What was lost is
// logged beside the database first (store.FailuresFile), so that a
// decision of a lost request says what happened.
func (r *Run) watchStore(ctx context.Context, stop context.CancelCauseFunc) {
	t := time.NewTicker(storeCheckEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		err := r.st.Check()
		if err == nil {
			continue
		}
		r.noteLost(err)
		stop(err)
		return
	}
}

// noteLost logs the loss of the run's database with the requests of the
// session that were pending in it (the lost file is still read through
// the open handle).
func (r *Run) noteLost(err error) {
	what := "replaced"
	if _, serr := os.Stat(r.st.Path()); errors.Is(serr, os.ErrNotExist) {
		what = "deleted"
	}
	var pending []int64
	if reqs, rerr := r.st.Requests(context.Background(), r.ses.ID); rerr == nil {
		for _, q := range reqs {
			if q.Status == store.StatusPending {
				pending = append(pending, q.ID)
			}
		}
	}
	text := fmt.Sprintf("%v; its run was ended: session %d", err, r.ses.ID)
	if r.ses.RunID != "" {
		text += ", run " + r.ses.RunID
	}
	if r.ses.TaskID != "" {
		text += ", task " + r.ses.TaskID + " moved to BLOCKED"
	}
	r.st.NoteFailure(store.Failure{What: what, Text: text, SessionID: r.ses.ID, RunID: r.ses.RunID, TaskID: r.ses.TaskID, Requests: pending})
}

// storageEnd is the end of a run its watch stopped: failed, with the
// storage failure as the reason (not canceled: nobody canceled it).
func storageEnd(ctx context.Context) error {
	if cause := context.Cause(ctx); errors.Is(cause, store.ErrStorage) {
		return fmt.Errorf("the run was ended because its database failed: %w", cause)
	}
	return nil
}
