package agenterr

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"
)

// The kind of an error: its first *Error, else a kind sentinel it wraps,
// else Internal; and each kind's codes are distinct where they must be.
func TestKindOf(t *testing.T) {
	lock := New(Unavailable, "timed out waiting for the lock")
	for _, c := range []struct {
		err  error
		want Kind
	}{
		{&Error{Kind: NotFound, What: "task", Value: "x"}, NotFound},
		{fmt.Errorf("context: %w", &Error{Kind: Conflict}), Conflict},
		{fmt.Errorf("%w: bad", ErrInvalid), Invalid},
		{fmt.Errorf("%w after 5s", lock), Unavailable},
		{&Error{Kind: Refused, Err: fmt.Errorf("%w", ErrInvalid)}, Refused}, // the outer kind wins
		{fs.ErrNotExist, Internal},
		{nil, ""},
	} {
		if got := KindOf(c.err); got != c.want {
			t.Errorf("KindOf(%v) = %q, want %q", c.err, got, c.want)
		}
	}
	if !errors.Is(fmt.Errorf("x: %w", lock), ErrUnavailable) || !errors.Is(&Error{Kind: NotFound}, ErrNotFound) || errors.Is(&Error{Kind: NotFound}, ErrInvalid) {
		t.Error("errors.Is does not match by kind")
	}
	exits, https := map[int]Kind{}, map[int]Kind{}
	for _, c := range Kinds {
		if k, dup := exits[c.Exit]; dup {
			t.Errorf("%s and %s share exit code %d", k, c.Kind, c.Exit)
		}
		if k, dup := https[c.HTTP]; dup {
			t.Errorf("%s and %s share HTTP status %d", k, c.Kind, c.HTTP)
		}
		exits[c.Exit], https[c.HTTP] = c.Kind, c.Kind
	}
	if ExitCode(&Error{Kind: NotFound}) != 3 || HTTPStatus(fs.ErrPermission) != 500 || ExitCode(nil) != 0 {
		t.Error("codes of errors")
	}
}

// Error's text is a plain rendering that names no adapter's words, and a
// sentinel cause adds nothing to it.
func TestErrorText(t *testing.T) {
	for _, c := range []struct {
		err  *Error
		want string
	}{
		{&Error{Kind: Invalid, Field: "priority", Value: "P9", Reason: "unknown priority", Valid: []string{"P1", "P2"}}, `invalid value: priority "P9": unknown priority; valid: P1, P2`},
		{&Error{Kind: NotFound, What: "task", Value: "a1", Suggestions: []string{"a2"}}, `not found: no task "a1"; did you mean a2?`},
		{&Error{Kind: Refused, Reason: "unknown skill", Override: "force"}, "unknown skill (override: force)"},
		{&Error{Kind: Conflict, Reason: "task a1 is DONE", Err: New(Conflict, "task is not claimable")}, "task a1 is DONE"},
		{&Error{Kind: Unavailable, Reason: "git failed", Err: errors.New("exit status 128")}, "git failed: exit status 128"},
		{&Error{Kind: Invalid, File: ".agent/config.yaml", Line: 3, Field: "fleet.timeout", Reason: "use a duration"}, ".agent/config.yaml:3: fleet.timeout: use a duration"},
		{&Error{Kind: Invalid, File: ".agent/config.yaml", Line: 3, Col: 12, Field: "fleet.timeout", Reason: "use a duration"}, ".agent/config.yaml:3:12: fleet.timeout: use a duration"},
	} {
		if got := c.err.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
	}
}

// WithField renames the input at fault on a copy, keeping everything else.
func TestWithField(t *testing.T) {
	orig := &Error{Kind: NotFound, Field: "id", What: "task", Value: "x"}
	err := WithField(fmt.Errorf("wrapped: %w", orig), "task_id")
	e := As(err)
	if e == nil || e.Field != "task_id" || e.Kind != NotFound || e.Value != "x" || orig.Field != "id" {
		t.Errorf("WithField: %+v (original %+v)", e, orig)
	}
	if plain := errors.New("plain"); WithField(plain, "x") != plain {
		t.Error("WithField changed an error that is no *Error")
	}
	if o := Of(fmt.Errorf("%w: line 3", ErrInvalid)); o.Kind != Invalid || o.Reason != "invalid value: line 3" {
		t.Errorf("Of a wrapped sentinel: %+v", o)
	}
}

type clientError struct{ kind Kind }

func (e *clientError) Error() string    { return "client: " + string(e.kind) }
func (e *clientError) DomainKind() Kind { return e.kind }

// A lower layer's error that knows its domain kind keeps it through
// wrapping, so a backend error that escaped its translation still exits
// with its code; a translated *Error in the chain wins.
func TestKindOfAKindedError(t *testing.T) {
	err := fmt.Errorf("list agents: %w", &clientError{Unavailable})
	if k := KindOf(err); k != Unavailable || ExitCode(err) != 6 {
		t.Errorf("kind %s exit %d; want unavailable, 6", k, ExitCode(err))
	}
	both := &Error{Kind: NotFound, Err: &clientError{Unavailable}}
	if k := KindOf(both); k != NotFound {
		t.Errorf("kind %s; want the *Error's not_found", k)
	}
}
