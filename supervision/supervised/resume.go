package supervised

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/store"
)

// Resume is the run a resumed run takes up: its session, interrupted when
// its supervisor died and reopened for this run (store.ReopenSession, by
// whoever resumed it), and how the CLI continues.
type Resume struct {
	// Session is the session's ID in the store: the same for the run
	// interrupted and the one that resumes it.
	Session int64
	// Native is the CLI's own session to continue ("" when the CLI never
	// said: the run starts one with PromptIfNew).
	Native string
	// PromptIfNew is the first prompt when the CLI cannot continue its
	// session (bridge.Request.PromptIfNew).
	PromptIfNew string
}

// takeUp is the session of a resumed run: reopened (created), its run the
// one that resumes it. The run's supervisor records itself and makes it
// active (Begin); of two supervisors of one resume, one does.
func takeUp(ctx context.Context, st *store.Store, p Params) (store.Session, error) {
	ses, err := st.Session(ctx, p.Resume.Session)
	if err != nil {
		return ses, err
	}
	if ses.Status != store.SessionCreated {
		return ses, &agenterr.Error{Kind: agenterr.Conflict, Err: store.ErrBadTransition, Reason: fmt.Sprintf(
			"session %d is %s: a resumed run takes up a session reopened for it (agentinfra session resume %d)", ses.ID, ses.Status, ses.ID)}
	}
	if p.RunID != "" && p.RunID != ses.RunID {
		if err := st.AttachRun(ctx, ses.ID, p.RunID); err != nil {
			return ses, err
		}
		ses.RunID = p.RunID
	}
	return ses, nil
}

// Interrupt ends the session of a resumed run that did not start (refused:
// the session limit, the CLI's protocol check, its books) as interrupted
// again, with the reason, so that it can be resumed later; the store is
// closed.
func (r *Run) Interrupt(ctx context.Context, reason string) error {
	defer r.st.Close()
	defer r.stopPol()
	_, err := r.st.SetSessionStatus(context.WithoutCancel(ctx), r.ses.ID, store.Transition{To: store.SessionInterrupted, By: store.ActorAgentinfra,
		Surface: store.SurfaceSupervisor, Reason: reason})
	if errors.Is(err, store.ErrBadTransition) {
		return nil
	}
	return err
}
