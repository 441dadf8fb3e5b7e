package fleet

import (
	"errors"
	"fmt"
)

// Error codes, HTTP-style, the same for every backend and adapter.
const (
	CodeBadInput    = 400
	CodeNotFound    = 404
	CodeConflict    = 409
	CodeUnavailable = 503
)

// Error is a fleet error: a code that adapters map to their own terms (exit
// status, MCP error code), the field of the input at fault when there is
// one, and a message that says what to do. Adapters never read Msg to decide
// anything.
type Error struct {
	Code  int
	Field string // input field at fault ("name", "role", "page_size"...), or ""
	Msg   string
	Err   error // the cause, if any
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Msg + ": " + e.Err.Error()
	}
	return e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

// CodeOf returns the fleet code of err (500 when it carries none).
func CodeOf(err error) int {
	var fe *Error
	if errors.As(err, &fe) {
		return fe.Code
	}
	return 500
}

func badInput(field, format string, a ...any) error {
	return &Error{Code: CodeBadInput, Field: field, Msg: fmt.Sprintf(format, a...)}
}

func notFound(field, format string, a ...any) error {
	return &Error{Code: CodeNotFound, Field: field, Msg: fmt.Sprintf(format, a...)}
}

func conflict(format string, a ...any) error {
	return &Error{Code: CodeConflict, Msg: fmt.Sprintf(format, a...)}
}

func unavailable(err error, format string, a ...any) error {
	return &Error{Code: CodeUnavailable, Msg: fmt.Sprintf(format, a...), Err: err}
}
