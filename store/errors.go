package store

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/agentinfra/agentinfra/agenterr"
)

// Errors of the store (test with errors.Is / errors.As). Each has its
// agenterr kind, which decides the exit code, HTTP status and MCP code: an
// unknown ID is not found; a request already decided or expired, a second
// pending request, a status change the session cannot make and a session
// beyond the limit are conflicts (who may decide is package supervision's
// rule, and its refusal).
var (
	ErrNotFound = agenterr.New(agenterr.NotFound, "not found")
	// ErrExpired: the request's deadline passed before the decision came.
	ErrExpired = agenterr.New(agenterr.Conflict, "the request expired")
	// ErrPendingExists: the session already has a pending request.
	ErrPendingExists = agenterr.New(agenterr.Conflict, "the session already has a pending request")
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

// notFoundItem is notFound for an item a person names by its reference
// ("p99", "s4"), with what lists the existing ones.
func notFoundItem(what, ref, hint string) error {
	return &agenterr.Error{Kind: agenterr.NotFound, Field: "id", What: what, Value: ref, Reason: hint, Err: ErrNotFound}
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

// checkPerson refuses an answer without a person or from a surface that
// is not a person's.
func checkPerson(by, surface string) error {
	if !slices.Contains(PeopleSurfaces, surface) {
		return &agenterr.Error{Kind: agenterr.Invalid, Field: "surface", Value: surface, Valid: PeopleSurfaces, Reason: "unknown surface"}
	}
	if by == "" {
		return agenterr.Invalidf("by", "a decision needs the name of the person who takes it")
	}
	return nil
}
