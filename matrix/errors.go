package matrix

import (
	"fmt"
	"strings"
)

// The typed errors below carry what an adapter needs to speak in its own
// words: the CLI names its flags, the MCP server names its fields. Their
// Error text is for logs and for callers that have no words of their own; no
// adapter reads it. Each unwraps to one of the sentinels (ErrInvalid,
// ErrNotFound, ErrRefused), so errors.Is keeps working.

// InvalidError is a value refused for a field.
type InvalidError struct {
	// Field is the domain name of what was given: "status", "priority",
	// "difficulty", "mode", "skills", "agent", "id", "description",
	// "created", "updated", "slug", or a column's header for other columns.
	Field string
	Value string
	// Valid lists the accepted values when they are a closed set.
	Valid []string
	// Reason says what is wrong, without naming a flag or a parameter.
	Reason string
}

func (e *InvalidError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v: %s", ErrInvalid, e.Field)
	if e.Value != "" {
		fmt.Fprintf(&b, " %q", e.Value)
	}
	if e.Reason != "" {
		b.WriteString(": " + e.Reason)
	}
	if len(e.Valid) > 0 {
		b.WriteString("; valid: " + strings.Join(e.Valid, ", "))
	}
	return b.String()
}

func (e *InvalidError) Unwrap() error { return ErrInvalid }

// NotFoundError is a name that names nothing: a task ID, a mode, a skill.
type NotFoundError struct {
	Kind        string // "task", "mode", "skill", ...
	Name        string
	Suggestions []string // close matches, best first
	// Reason explains an absence that is not a typo (e.g. the row could not
	// be read, or the matrix has no task table); "" otherwise.
	Reason string
}

func (e *NotFoundError) Error() string {
	msg := fmt.Sprintf("%v: no %s %q", ErrNotFound, e.Kind, e.Name)
	switch {
	case e.Reason != "":
		msg += "; " + e.Reason
	case len(e.Suggestions) > 0:
		msg += "; did you mean " + strings.Join(e.Suggestions, ", ") + "?"
	}
	return msg
}

func (e *NotFoundError) Unwrap() error { return ErrNotFound }

// RefusedError is a change that was not made, with the reason and, when one
// exists, the option that makes it anyway.
type RefusedError struct {
	Reason string
	// Override is the domain name of the option that forces the change
	// ("force", "skip_missing_skills"); "" when nothing overrides it. The
	// CLI renders it as a flag, MCP as a parameter.
	Override string
	// Holder names who holds what was asked for (a claimed task's agent).
	Holder string
	// Field is the domain name of the input the refusal is about ("skills",
	// "slug", "id"), when there is one; adapters render it like
	// InvalidError.Field.
	Field string
	// Err is a sentinel the refusal also matches with errors.Is (e.g. the
	// task package's ErrExists); nil for none.
	Err error
}

func (e *RefusedError) Error() string {
	msg := fmt.Sprintf("%v: %s", ErrRefused, e.Reason)
	if e.Override != "" {
		msg += " (override: " + e.Override + ")"
	}
	return msg
}

func (e *RefusedError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrRefused, e.Err}
	}
	return []error{ErrRefused}
}
