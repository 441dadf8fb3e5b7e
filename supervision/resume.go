package supervision

import (
	"context"
	"fmt"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/store"
)

// Resumer restarts the run of an interrupted session under a new
// supervisor, on the CLI's own session (package supervision/resume's):
// by is who resumes it. The service has authorised the person already.
type Resumer func(ctx context.Context, st *store.Store, ses Session, by string) (Resumed, error)

// Resumed is a session resumed.
type Resumed struct {
	Session Session `json:"session"`
	// Restarted: the run was restarted (an interrupted session); false for
	// a paused session that goes on.
	Restarted bool `json:"restarted"`
	// RunID is the run that resumes it, Supervisor the pid of its new
	// supervisor (a restarted run's).
	RunID      string `json:"run_id,omitempty"`
	Supervisor int    `json:"supervisor,omitempty"`
}

// Resumable reports whether a session's run can be restarted: it was
// interrupted (its supervisor died; a session a person stopped is
// terminated) and it is a run (the store has its record).
func Resumable(ses Session) bool {
	return ses.Status == SessionInterrupted && ses.RunID != ""
}

// Resume resumes session id: a paused session goes on (SIGCONT, as
// MoveSession), an interrupted one is restarted on its CLI's own session
// under a new supervisor (the Resumer), its task back to IN_PROGRESS
// "resumed by" the actor. Only its owner or an operator may. A host's
// session is resumed by its host, on its machine (hostResume).
func (s *Service) Resume(ctx context.Context, a Actor, id int64) (Resumed, error) {
	if e, n, err := s.route(id); err != nil || e != nil {
		return s.hostResume(ctx, a, e, n, err)
	}
	if err := s.authoriseFor(ctx, a, id, fmt.Sprintf("resume session %d", id)); err != nil {
		return Resumed{}, err
	}
	ses, err := s.st.Session(ctx, id)
	if err != nil {
		return Resumed{}, err
	}
	switch {
	case ses.Status == SessionPaused:
		moved, err := s.MoveSession(ctx, a, id, SessionActive, "")
		return Resumed{Session: moved}, err
	case !Resumable(ses):
		return Resumed{Session: ses}, notResumable(ses)
	case s.resume == nil:
		return Resumed{Session: ses}, agenterr.New(agenterr.Unavailable, fmt.Sprintf("session %d cannot be restarted from here: run `agentinfra session resume %d`", id, id))
	}
	r, err := s.resume(ctx, s.st, ses, a.Name)
	if err != nil {
		return r, err
	}
	r.Restarted = true
	s.publish(events.Event{Kind: events.SessionChanged, SessionID: id, Status: r.Session.Status, Text: "resumed by " + a.String(), Actor: a.Name})
	return r, nil
}

// notResumable is the refusal to resume ses, which is neither paused nor
// interrupted.
func notResumable(ses Session) error {
	return &agenterr.Error{Kind: agenterr.Conflict, Err: ErrBadTransition, Reason: fmt.Sprintf(
		"session %d is %s: only a paused session, or one interrupted because its supervisor died, can be resumed", ses.ID, ses.Status)}
}

// hostResume resumes session n of host e: the host authorises the actor
// and resumes it there, with its own Resumer (the run restarts in the
// workspace, under a supervisor of the host's). A session the host's
// store says cannot be resumed is refused here, in this machine's IDs,
// before anything is asked of the host.
func (s *Service) hostResume(ctx context.Context, a Actor, e *hostEntry, n int64, routeErr error) (Resumed, error) {
	return hostChange(ctx, s, a, e, routeErr, func() (Resumed, error) {
		ses, err := e.h.Session(ctx, n)
		if err != nil {
			return Resumed{}, err
		}
		if ses.Status != SessionPaused && !Resumable(ses) {
			return Resumed{}, notResumable(e.session(ses))
		}
		return e.h.Resume(ctx, a, n)
	}, e.resumed, func(r Resumed) events.Event {
		return events.Event{Kind: events.SessionChanged, SessionID: r.Session.ID, Status: r.Session.Status, Text: "resumed by " + a.String(), Actor: a.Name}
	})
}
