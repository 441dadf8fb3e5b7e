package coder

import (
	"errors"
	"fmt"
	"strings"

	"github.com/agentinfra/agentinfra/agenterr"
)

// Kind says what went wrong talking to Coder; adapters decide on it, never
// on the text.
type Kind int

// Error kinds.
const (
	// KindUnexpected is an answer the client does not understand.
	KindUnexpected Kind = iota
	// KindUnavailable: Coder cannot be reached, timed out or answered 5xx.
	KindUnavailable
	// KindUnauthorized: Coder answered 401 or 403 (token missing, expired
	// or not allowed).
	KindUnauthorized
	// KindNotAuthenticated: an app proxy redirected to /login (the session
	// token did not reach it or is no longer valid).
	KindNotAuthenticated
	// KindInvalid: Coder rejected the input (400), or the client refused
	// it before sending; Field names the field when known.
	KindInvalid
	// KindNotFound: 404.
	KindNotFound
	// KindConflict: 409 (a name already in use, a build already running).
	KindConflict
)

var kindNames = map[Kind]string{
	KindUnexpected: "unexpected", KindUnavailable: "unavailable", KindUnauthorized: "unauthorized",
	KindNotAuthenticated: "not authenticated", KindInvalid: "invalid", KindNotFound: "not found",
	KindConflict: "conflict",
}

func (k Kind) String() string { return kindNames[k] }

// Domain is the domain error kind a Kind maps to (agenterr's; the fleet
// codes 400, 404, 409, 503): anything that keeps the backend from working
// (unreachable, bad token, an answer we cannot read) is Unavailable.
func (k Kind) Domain() agenterr.Kind {
	switch k {
	case KindInvalid:
		return agenterr.Invalid
	case KindNotFound:
		return agenterr.NotFound
	case KindConflict:
		return agenterr.Conflict
	default:
		return agenterr.Unavailable
	}
}

// Sentinels for errors.Is: errors.Is(err, coder.ErrNotFound).
var (
	ErrUnavailable      = &Error{Kind: KindUnavailable}
	ErrUnauthorized     = &Error{Kind: KindUnauthorized}
	ErrNotAuthenticated = &Error{Kind: KindNotAuthenticated}
	ErrInvalid          = &Error{Kind: KindInvalid}
	ErrNotFound         = &Error{Kind: KindNotFound}
	ErrConflict         = &Error{Kind: KindConflict}
)

// Error is every error of this package.
type Error struct {
	Kind   Kind
	Method string // request method ("" for errors before a request)
	URL    string // request URL, without credentials
	Status int    // HTTP status, 0 when there was no answer
	// Field is the input field at fault for KindInvalid (Coder's
	// validations[0].field, or the client's own check), else "".
	Field string
	// Response is Coder's error body when it sent one.
	Response *Response
	Msg      string // what happened and what to do
	Err      error  // the cause
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Msg + ": " + e.Err.Error()
	}
	return e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

// DomainKind is the error's domain kind (agenterr.Kinded), for an error
// that reaches an adapter without the backend's translation (fleetError).
func (e *Error) DomainKind() agenterr.Kind { return e.Kind.Domain() }

// Is matches the sentinels by kind.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Msg == "" && t.Err == nil && t.Kind == e.Kind
}

// KindOf returns the Kind of err (KindUnexpected when it carries none).
func KindOf(err error) Kind {
	var ce *Error
	if errors.As(err, &ce) {
		return ce.Kind
	}
	return KindUnexpected
}

func invalid(field, format string, a ...any) *Error {
	return &Error{Kind: KindInvalid, Field: field, Msg: fmt.Sprintf(format, a...)}
}

// statusError turns a non-2xx answer into an *Error that says what to check.
func statusError(method, url string, status int, body *Response, location string) *Error {
	e := &Error{Method: method, URL: url, Status: status, Response: body}
	said := ""
	if body != nil && body.Message != "" {
		said = ": " + body.Message
		if body.Detail != "" {
			said += " (" + body.Detail + ")"
		}
	}
	switch {
	case status >= 300 && status < 400 && strings.Contains(location, "/login"):
		e.Kind = KindNotAuthenticated
		e.Msg = fmt.Sprintf("Coder redirected %s %s to its login page: the session token was not accepted; "+
			"check CODER_SESSION_TOKEN (create one with `coder tokens create`)", method, url)
	case status >= 300 && status < 400:
		e.Kind = KindUnexpected
		e.Msg = fmt.Sprintf("Coder redirected %s %s to %q; check CODER_URL is the deployment's access URL", method, url, location)
	case status == 401:
		e.Kind = KindUnauthorized
		e.Msg = fmt.Sprintf("Coder refused the session token for %s %s (401%s): it is missing or expired; "+
			"set CODER_SESSION_TOKEN or the token file to a valid token (`coder tokens create`)", method, url, said)
	case status == 403:
		e.Kind = KindUnauthorized
		e.Msg = fmt.Sprintf("Coder does not allow %s %s for this token's user (403%s); check the user's roles", method, url, said)
	case status == 400 || status == 422:
		e.Kind = KindInvalid
		if body != nil && len(body.Validations) > 0 {
			e.Field = body.Validations[0].Field
			parts := make([]string, len(body.Validations))
			for i, v := range body.Validations {
				parts[i] = v.Field + ": " + v.Detail
			}
			e.Msg = fmt.Sprintf("Coder rejected %s (%d%s): %s", e.Field, status, said, strings.Join(parts, "; "))
		} else {
			e.Msg = fmt.Sprintf("Coder rejected %s %s (%d%s)", method, url, status, said)
		}
	case status == 404:
		e.Kind = KindNotFound
		e.Msg = fmt.Sprintf("Coder has no %s (404%s)", url, said)
	case status == 409:
		e.Kind = KindConflict
		if body != nil && len(body.Validations) > 0 {
			e.Field = body.Validations[0].Field
		}
		e.Msg = fmt.Sprintf("Coder refused %s %s (409%s)", method, url, said)
	case status >= 500:
		e.Kind = KindUnavailable
		e.Msg = fmt.Sprintf("Coder at %s answered %d%s; check the deployment's health (`coder ping`, its logs) and try again", url, status, said)
	default:
		e.Kind = KindUnexpected
		e.Msg = fmt.Sprintf("Coder answered %s %s with an unexpected %d%s", method, url, status, said)
	}
	return e
}
