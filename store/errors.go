package store

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Errors of the store (test with errors.Is / errors.As).
var (
	ErrNotFound = errors.New("not found")
	// ErrExpired: the request's deadline passed before the decision came.
	ErrExpired = errors.New("the request expired")
	// ErrPendingExists: the session already has a pending request.
	ErrPendingExists = errors.New("the session already has a pending request")
	// ErrNotAllowed: the person may not decide this session's requests.
	ErrNotAllowed = errors.New("not allowed")
	// ErrBadTransition: the session cannot go from its status to the asked one.
	ErrBadTransition = errors.New("bad session status change")
	// ErrLimit is wrapped by *LimitError.
	ErrLimit = errors.New("too many supervised sessions")
)

// DecidedError is the answer to a decision that lost: the request had
// already been decided (or had expired, been withdrawn or interrupted).
type DecidedError struct{ Request Request }

func (e *DecidedError) Error() string {
	r := e.Request
	at := "?"
	if r.DecidedAt != nil {
		at = r.DecidedAt.Format(time.RFC3339)
	}
	switch r.Status {
	case StatusExpired:
		return fmt.Sprintf("request %d already expired at %s", r.ID, at)
	case StatusWithdrawn:
		return fmt.Sprintf("request %d was withdrawn by the agent at %s", r.ID, at)
	case StatusInterrupted:
		return fmt.Sprintf("request %d was interrupted at %s (%s)", r.ID, at, r.Reason)
	}
	return fmt.Sprintf("request %d already %s via %s by %s at %s", r.ID, r.Status, r.Surface, Handle(r.DecidedBy), at)
}

// Is makes errors.Is(err, ErrExpired) true for a request that had expired.
func (e *DecidedError) Is(target error) bool {
	return target == ErrExpired && e.Request.Status == StatusExpired
}

// LimitError refuses a session beyond max_concurrent_sessions.
type LimitError struct {
	Limit   int
	Holding []Session
}

func (e *LimitError) Error() string {
	var ids []string
	for _, s := range e.Holding {
		d := fmt.Sprintf("%d (%s, %s", s.ID, s.Status, Handle(s.Owner))
		if s.Agent != "" {
			d += ", agent " + s.Agent
		}
		if s.TaskID != "" {
			d += ", task " + s.TaskID
		}
		ids = append(ids, d+")")
	}
	return fmt.Sprintf("%v: max_concurrent_sessions is %d and these hold it: %s; stop one (agentinfra session stop ID) or raise supervision.max_concurrent_sessions in .agent/config.yaml",
		ErrLimit, e.Limit, strings.Join(ids, "; "))
}

func (e *LimitError) Unwrap() error { return ErrLimit }

// Handle renders a person as @name (system actors as they are).
func Handle(name string) string {
	if name == "" {
		return "(nobody)"
	}
	if strings.HasPrefix(name, "@") || strings.Contains(name, ":") {
		return name
	}
	switch name {
	case ActorAgentinfra, ActorPolicy, ActorWatchdog: // system actors, not people
		return name
	}
	return "@" + name
}

// checkPerson refuses a decision without a person or from a surface that
// is not a person's.
func checkPerson(by, surface string) error {
	if !slices.Contains(PeopleSurfaces, surface) {
		return fmt.Errorf("unknown surface %q: use one of %s", surface, strings.Join(PeopleSurfaces, ", "))
	}
	if by == "" {
		return fmt.Errorf("a decision needs the name of the person who takes it")
	}
	return nil
}

// notAllowed is ErrNotAllowed for a person who is neither the session's
// owner nor an operator.
func notAllowed(by string, ses Session, what string) error {
	return fmt.Errorf("%w: %s may not act on %s: only the session's owner %s or an operator (supervision.operators in .agent/config.yaml) may",
		ErrNotAllowed, Handle(by), what, Handle(ses.Owner))
}
