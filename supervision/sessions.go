package supervision

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/store"
)

// MoveSession pauses (SessionPaused), resumes (SessionActive) or stops
// (SessionTerminated) session id: authorise, the store's status change
// (ErrBadTransition when the session cannot make it), SessionChanged. The
// session's supervisor acts on the new status (SIGSTOP, SIGCONT, the end
// of the run).
func (s *Service) MoveSession(ctx context.Context, a Actor, id int64, to, reason string) (Session, error) {
	if e, n, err := s.route(id); err != nil || e != nil {
		return hostChange(ctx, s, a, e, err, func() (Session, error) { return e.h.MoveSession(ctx, a, n, to, reason) }, e.session, func(ses Session) events.Event {
			return events.Event{Kind: events.SessionChanged, SessionID: ses.ID, Status: ses.Status, Text: reason, Actor: a.Name}
		})
	}
	if err := s.authoriseFor(ctx, a, id, fmt.Sprintf("change session %d", id)); err != nil {
		return Session{}, err
	}
	ses, err := s.st.SetSessionStatus(ctx, id, store.Transition{To: to, By: a.Name, Surface: a.Surface, Reason: reason})
	if err != nil {
		return ses, err
	}
	s.publish(events.Event{Kind: events.SessionChanged, SessionID: ses.ID, Status: ses.Status, Text: reason, Actor: a.Name})
	return ses, nil
}

// SetMode changes where a live session's requests may be answered (local:
// the terminal and the web page; remote and hybrid: Slack too).
func (s *Service) SetMode(ctx context.Context, a Actor, id int64, mode string) (Session, error) {
	if e, n, err := s.route(id); err != nil || e != nil {
		return hostChange(ctx, s, a, e, err, func() (Session, error) { return e.h.SetMode(ctx, a, n, mode) }, e.session, func(ses Session) events.Event {
			return events.Event{Kind: events.SessionChanged, SessionID: ses.ID, Status: ses.Status, Text: "mode " + ses.Mode, Actor: a.Name}
		})
	}
	if err := s.authoriseFor(ctx, a, id, fmt.Sprintf("change the mode of session %d", id)); err != nil {
		return Session{}, err
	}
	ses, err := s.st.SetSessionMode(ctx, id, mode, a.Name, a.Surface)
	if err != nil {
		return ses, err
	}
	s.publish(events.Event{Kind: events.SessionChanged, SessionID: ses.ID, Status: ses.Status, Text: "mode " + ses.Mode, Actor: a.Name})
	return ses, nil
}

// SetChannel sets where the remote surface posts a session ("" = the
// config's channel).
func (s *Service) SetChannel(ctx context.Context, a Actor, id int64, channel string) error {
	if e, n, err := s.route(id); err != nil || e != nil {
		_, err := hostChange(ctx, s, a, e, err, func() (int64, error) { return id, e.h.SetChannel(ctx, a, n, channel) },
			func(id int64) int64 { return id }, func(id int64) events.Event {
				return events.Event{Kind: events.SessionChanged, SessionID: id, Text: "channel " + channel, Actor: a.Name}
			})
		return err
	}
	if err := s.authoriseFor(ctx, a, id, fmt.Sprintf("change the channel of session %d", id)); err != nil {
		return err
	}
	if err := s.st.SetSessionChannel(ctx, id, channel); err != nil {
		return err
	}
	s.publish(events.Event{Kind: events.SessionChanged, SessionID: id, Text: "channel " + channel, Actor: a.Name})
	return nil
}

// Steer queues text for a session that has not ended: its supervisor
// delivers it as the agent's next user message.
func (s *Service) Steer(ctx context.Context, a Actor, id int64, text string) (Steering, error) {
	if e, n, err := s.route(id); err != nil || e != nil {
		return hostChange(ctx, s, a, e, err, func() (Steering, error) { return e.h.Steer(ctx, a, n, text) }, e.steering, func(m Steering) events.Event {
			return events.Event{Kind: events.SteeringChanged, SessionID: m.SessionID, ItemID: m.ID, Status: m.Status, Text: m.Text, Actor: a.Name}
		})
	}
	if err := s.authoriseFor(ctx, a, id, fmt.Sprintf("steer session %d", id)); err != nil {
		return Steering{}, err
	}
	m, err := s.st.Steer(ctx, id, text, a.Name, a.Surface)
	if err != nil {
		return m, err
	}
	s.publish(events.Event{Kind: events.SteeringChanged, SessionID: id, ItemID: m.ID, Status: m.Status, Text: m.Text, Actor: a.Name})
	return m, nil
}

// stopWait bounds how long stopAndWait waits for a supervisor to exit.
const stopWait = 30 * time.Second

// stopAndWait ends live session ses (authorised already) and waits for its
// supervisor process to exit, so that its agent no longer writes the tree.
func (s *Service) stopAndWait(ctx context.Context, a Actor, ses Session, reason string) error {
	sups, _ := s.st.LiveSupervisors(ctx)
	sup := sups[ses.ID]
	moved, err := s.st.SetSessionStatus(ctx, ses.ID, store.Transition{To: store.SessionTerminated, By: a.Name, Surface: a.Surface, Reason: reason})
	switch {
	case errors.Is(err, store.ErrBadTransition): // ended meanwhile
	case err != nil:
		return err
	default:
		s.publish(events.Event{Kind: events.SessionChanged, SessionID: ses.ID, Status: moved.Status, Text: reason, Actor: a.Name})
	}
	if sup.PID <= 0 {
		return nil
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(stopWait)
	for syscall.Kill(sup.PID, 0) == nil {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline:
			return fmt.Errorf("session %d is stopped, but its supervisor (pid %d) is still running after %s: nothing was restored; try again", ses.ID, sup.PID, stopWait)
		case <-tick.C:
		}
	}
	return nil
}
