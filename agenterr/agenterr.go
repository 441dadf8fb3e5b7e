// Package agenterr is agentinfra's one domain error. Every service (task,
// fleet, dispatch, prompt, the config) says what went wrong with an *Error:
// a Kind, the input at fault (Field, Value, the Valid values or the close
// matches), who holds what was asked for (Holder), the option that makes a
// refused change anyway (Override), where in a file the fault is (File,
// Line) and why (Reason). Adapters render it from these fields, each in its
// own words — the CLI names its flags and exits with the kind's code, the
// MCP server names its parameters and answers with the kind's code — and
// never read an error's text.
//
// Each Kind maps to one exit code, one HTTP status and one MCP error code
// (the HTTP status), in one table (Kinds); README's error table is that
// table. An error that is no *Error (an I/O error, a bug) is Internal.
package agenterr

import (
	"errors"
	"fmt"
	"strings"
)

// Kind is what went wrong, the only thing adapters decide on.
type Kind string

// The kinds.
const (
	// Invalid: a value is not valid for its field (bad input).
	Invalid Kind = "invalid"
	// NotFound: a name (a task ID, a mode, an agent) names nothing.
	NotFound Kind = "not_found"
	// Conflict: the current state is in the way: a task held by another
	// agent or not in a status that allows it, an agent busy, a name or a
	// folder taken. It may succeed once the state changes.
	Conflict Kind = "conflict"
	// Refused: agentinfra will not make the change as asked, to keep data
	// safe (a row that would not read back, an unknown skill); Override
	// names the option that makes it anyway, when one does.
	Refused Kind = "refused"
	// Forbidden: the person asking may not do it (only a supervised
	// session's owner or an operator may decide its requests).
	Forbidden Kind = "forbidden"
	// Unavailable: something it needs cannot be had now: the matrix lock
	// within its timeout, a backend (Coder, git) that fails or cannot be
	// reached. Retrying later may work.
	Unavailable Kind = "unavailable"
	// Internal: anything else (an I/O error, a bug).
	Internal Kind = "internal"
)

// Codes are what a Kind becomes in each adapter.
type Codes struct {
	Kind Kind
	// Exit is the CLI's exit status (2 is also a usage error's).
	Exit int
	// HTTP is the HTTP status, and the MCP tool error's code.
	HTTP int
	// Meaning says when the kind is used, for docs and --help.
	Meaning string
}

// Kinds is the one table of kinds and their codes, in README's order.
var Kinds = []Codes{
	{Invalid, 2, 400, "a value is not valid for its field (an unknown status, a malformed name, a bad config key)"},
	{NotFound, 3, 404, "a name names nothing (a task ID, a mode, a skill, an agent, a project)"},
	{Conflict, 4, 409, "the state is in the way: a task held by another agent or in the wrong status, an agent busy, a name or folder taken"},
	{Refused, 5, 422, "the change is not made, to keep data safe (a row that would not read back, an unknown skill); the override, when there is one, makes it anyway"},
	{Unavailable, 6, 503, "something needed cannot be had now: the matrix lock within its timeout, a backend or git failing"},
	{Forbidden, 7, 403, "the person asking may not do it: only a supervised session's owner or an operator decides its requests"},
	{Internal, 1, 500, "anything else: an I/O error, a bug"},
}

// CodesOf returns k's codes (Internal's for an unknown kind).
func CodesOf(k Kind) Codes {
	for _, c := range Kinds {
		if c.Kind == k {
			return c
		}
	}
	return Kinds[len(Kinds)-1]
}

// ExitCode is the CLI's exit status of err (0 for nil).
func ExitCode(err error) int {
	if err == nil {
		return 0
	}
	return CodesOf(KindOf(err)).Exit
}

// HTTPStatus is the HTTP status of err, also its MCP error code (200 for nil).
func HTTPStatus(err error) int {
	if err == nil {
		return 200
	}
	return CodesOf(KindOf(err)).HTTP
}

// Error is the domain error. Only Kind is required.
type Error struct {
	Kind Kind
	// Field is the domain name of the input at fault: a task field
	// ("status", "priority", "id", "skills"), a column's header, a fleet
	// parameter ("agent_name", "task_id"), a config key ("fleet.timeout");
	// "" when no input is at fault. Adapters name it in their words (a
	// flag, a parameter).
	Field string
	// Value is the value refused (Invalid) or the name that names nothing
	// (NotFound).
	Value string
	// Valid lists the accepted values when they are a closed set.
	Valid []string
	// What is what a NotFound Value was looked up as: "task", "mode",
	// "skill". With it, adapters say `no task "X"`; without it, Reason
	// says it all.
	What string
	// Suggestions are close matches of a NotFound Value, best first.
	Suggestions []string
	// Holder names who holds what was asked for (a claimed task's agent).
	Holder string
	// Override is the domain name of the option that makes the change
	// anyway ("force", "skip_missing_skills"); "" when nothing does.
	Override string
	// File, Line and Col locate the fault in a file (a config key), when
	// it is in one; File is as messages show it (workspace-relative).
	File string
	Line int
	Col  int
	// Reason says what is wrong and what to do, naming no flag and no
	// parameter.
	Reason string
	// Err is the cause, or a sentinel that errors.Is also matches.
	Err error
}

// Where is the fault's place as editors and compilers write it:
// FILE:LINE:COL, FILE:LINE or FILE ("" when it is in no file).
func (e *Error) Where() string {
	w := e.File
	if e.File != "" && e.Line > 0 {
		w += fmt.Sprintf(":%d", e.Line)
		if e.Col > 0 {
			w += fmt.Sprintf(":%d", e.Col)
		}
	}
	return w
}

// Error is a plain rendering, for logs and callers that have no words of
// their own; no adapter reads it.
func (e *Error) Error() string {
	var b strings.Builder
	switch {
	case e.File != "": // a key of a file: FILE:LINE:COL: key: reason
		b.WriteString(e.Where() + ": ")
		if e.Field != "" && e.Field != "config" {
			b.WriteString(e.Field + ": ")
		}
		b.WriteString(e.Reason)
	case e.Kind == Invalid && (e.Value != "" || len(e.Valid) > 0 || e.Reason == ""):
		b.WriteString("invalid value: " + e.Field)
		if e.Value != "" {
			fmt.Fprintf(&b, " %q", e.Value)
		}
		if e.Reason != "" {
			b.WriteString(": " + e.Reason)
		}
		if len(e.Valid) > 0 {
			b.WriteString("; valid: " + strings.Join(e.Valid, ", "))
		}
	case e.Kind == NotFound && e.What != "":
		fmt.Fprintf(&b, "not found: no %s %q", e.What, e.Value)
		switch {
		case e.Reason != "":
			b.WriteString("; " + e.Reason)
		case len(e.Suggestions) > 0:
			b.WriteString("; did you mean " + strings.Join(e.Suggestions, ", ") + "?")
		}
	default:
		b.WriteString(e.Reason)
		if e.Reason == "" {
			b.WriteString(string(e.Kind))
		}
		if e.Override != "" {
			b.WriteString(" (override: " + e.Override + ")")
		}
	}
	if c := e.Cause(); c != "" {
		b.WriteString(": " + c)
	}
	return b.String()
}

// Cause is the text of Err when it says more than the kind (a sentinel
// does not): what adapters add after the Reason of an Unavailable or
// Internal error.
func (e *Error) Cause() string {
	if e.Err == nil || isSentinel(e.Err) {
		return ""
	}
	return e.Err.Error()
}

// Unwrap returns the cause or sentinel.
func (e *Error) Unwrap() error { return e.Err }

// Is matches the kind sentinels (ErrInvalid, ...): errors.Is(err,
// agenterr.ErrNotFound) holds for every NotFound error.
func (e *Error) Is(target error) bool {
	k, ok := sentinelKinds[target]
	return ok && k == e.Kind
}

// Sentinels of each kind, for errors.Is and for wrapping with %w
// (fmt.Errorf("%w: ...", agenterr.ErrInvalid) is an Invalid error).
var (
	ErrInvalid     = &sentinel{Invalid, "invalid value"}
	ErrNotFound    = &sentinel{NotFound, "not found"}
	ErrConflict    = &sentinel{Conflict, "conflict"}
	ErrRefused     = &sentinel{Refused, "change refused"}
	ErrUnavailable = &sentinel{Unavailable, "unavailable"}
	ErrForbidden   = &sentinel{Forbidden, "not allowed"}
)

var sentinelKinds = map[error]Kind{
	ErrInvalid: Invalid, ErrNotFound: NotFound, ErrConflict: Conflict, ErrRefused: Refused, ErrUnavailable: Unavailable,
	ErrForbidden: Forbidden,
}

// sentinel is a kind's sentinel, and New's errors: an error of a kind
// that carries nothing but its text.
type sentinel struct {
	kind Kind
	text string
}

func (s *sentinel) Error() string { return s.text }

// Is makes New's sentinels match their kind's: errors.Is(ErrLockTimeout,
// ErrUnavailable).
func (s *sentinel) Is(target error) bool {
	k, ok := sentinelKinds[target]
	return ok && k == s.kind
}

func isSentinel(err error) bool {
	_, ok := err.(*sentinel)
	return ok
}

// New returns a sentinel of kind k with text: errors.Is matches it by
// identity, and an error that wraps it (fmt.Errorf("%w ...", s)) is of
// kind k.
func New(k Kind, text string) error { return &sentinel{k, text} }

// KindOf is the kind of err: the Kind of the first *Error in its chain, else
// the kind of a sentinel it wraps (ErrInvalid, New's), else the kind a
// Kinded error in it says (a client's transport error that its service did
// not translate), else Internal.
func KindOf(err error) Kind {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	var s *sentinel
	if errors.As(err, &s) {
		return s.kind
	}
	var k Kinded
	if errors.As(err, &k) {
		return k.DomainKind()
	}
	return Internal
}

// Kinded is an error of a lower layer (the Coder REST client's) that knows
// its domain kind. Services translate such errors into *Error, naming the
// field in their words; KindOf reads the kind of one that got through.
type Kinded interface {
	error
	DomainKind() Kind
}

// As returns the first *Error in err's chain, or nil.
func As(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// Of returns err as an *Error, for rendering: the first one in its chain,
// else a new one of err's kind whose Reason is err's text. nil for nil.
func Of(err error) *Error {
	if err == nil {
		return nil
	}
	if e := As(err); e != nil {
		return e
	}
	return &Error{Kind: KindOf(err), Reason: err.Error()}
}

// Constructors of the common shapes.

// Invalidf is an Invalid error on field with a reason.
func Invalidf(field, format string, a ...any) *Error {
	return &Error{Kind: Invalid, Field: field, Reason: fmt.Sprintf(format, a...)}
}

// NotFoundf is a NotFound error on field with a reason.
func NotFoundf(field, format string, a ...any) *Error {
	return &Error{Kind: NotFound, Field: field, Reason: fmt.Sprintf(format, a...)}
}

// Conflictf is a Conflict error with a reason.
func Conflictf(format string, a ...any) *Error {
	return &Error{Kind: Conflict, Reason: fmt.Sprintf(format, a...)}
}

// Refusedf is a Refused error with a reason.
func Refusedf(format string, a ...any) *Error {
	return &Error{Kind: Refused, Reason: fmt.Sprintf(format, a...)}
}

// Unavailablef is an Unavailable error with its cause (may be nil) and a reason.
func Unavailablef(cause error, format string, a ...any) *Error {
	return &Error{Kind: Unavailable, Reason: fmt.Sprintf(format, a...), Err: cause}
}

// WithField returns a copy of the first *Error of err's chain with Field
// set, for a caller whose input names the field otherwise (the fleet's
// task_id for the task service's id); err itself when it holds none.
func WithField(err error, field string) error {
	e := As(err)
	if e == nil {
		return err
	}
	c := *e
	c.Field = field
	return &c
}
