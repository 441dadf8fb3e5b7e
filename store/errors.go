package store

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
)

// Errors of the store (test with errors.Is / errors.As). Each has its
// agenterr kind, which decides the exit code, HTTP status and MCP code: an
// unknown ID is not found; a request already decided or expired, a second
// pending request, a status change the session cannot make and a session
// beyond the limit are conflicts; a person who may not decide is
// forbidden.
var (
	ErrNotFound = agenterr.New(agenterr.NotFound, "not found")
	// ErrExpired: the request's deadline passed before the decision came.
	ErrExpired = agenterr.New(agenterr.Conflict, "the request expired")
	// ErrPendingExists: the session already has a pending request.
	ErrPendingExists = agenterr.New(agenterr.Conflict, "the session already has a pending request")
	// ErrNotAllowed: the person may not decide this session's requests.
	ErrNotAllowed = agenterr.New(agenterr.Forbidden, "not allowed")
	// ErrBadTransition: the session cannot go from its status to the asked one.
	ErrBadTransition = agenterr.New(agenterr.Conflict, "bad session status change")
	// ErrLimit is wrapped by *LimitError.
	ErrLimit = agenterr.New(agenterr.Conflict, "too many supervised sessions")
)

// notFound is the error of an unknown request or session ID (what:
// "request", "session"); it wraps ErrNotFound.
func notFound(what string, id int64) error {
	return &agenterr.Error{Kind: agenterr.NotFound, Field: "id", What: what, Value: strconv.FormatInt(id, 10), Err: ErrNotFound}
}

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

// Unwrap makes a lost decision a conflict (agenterr.KindOf).
func (e *DecidedError) Unwrap() error { return agenterr.ErrConflict }

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
