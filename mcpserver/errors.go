package mcpserver

import (
	"errors"
	"strings"

	"github.com/agentinfra/agentinfra/matrix"
)

// mcpMessage renders an error in the words of an MCP client: the domain's
// typed errors name fields and overrides, which become this server's
// parameters (priority → priority, a column → set_fields, force → force:
// true); an unknown task ID points at action list. Wrapping text around a
// typed error is kept; a fieldError is already in these words.
func mcpMessage(err error) string {
	var fe *fieldError
	if errors.As(err, &fe) {
		return err.Error()
	}
	msg := err.Error()
	var (
		inv   *matrix.InvalidError
		nf    *matrix.NotFoundError
		ref   *matrix.RefusedError
		typed error
		words string
	)
	switch {
	case errors.As(err, &inv):
		typed, words = inv, mcpInvalid(inv)
	case errors.As(err, &nf):
		typed, words = nf, mcpNotFound(nf)
	case errors.As(err, &ref):
		typed, words = ref, mcpRefused(ref)
	default:
		return msg
	}
	if i := strings.LastIndex(msg, typed.Error()); i >= 0 {
		return msg[:i] + words + msg[i+len(typed.Error()):]
	}
	return words
}

// mcpField is the parameter that carries a domain field.
func mcpField(field string) string {
	switch field {
	case "column", "created", "updated":
		return "set_fields"
	}
	return field
}

func mcpInvalid(e *matrix.InvalidError) string {
	var b strings.Builder
	b.WriteString(mcpField(e.Field) + ": ")
	if e.Field == "column" || e.Field == "created" || e.Field == "updated" {
		b.WriteString(e.Field + " ")
	}
	if e.Value != "" {
		b.WriteString(quote(e.Value) + " is not valid")
	} else {
		b.WriteString("not valid")
	}
	if e.Reason != "" {
		b.WriteString(": " + e.Reason)
	}
	if len(e.Valid) > 0 {
		b.WriteString("; use one of " + strings.Join(e.Valid, ", "))
	}
	return b.String()
}

func mcpNotFound(e *matrix.NotFoundError) string {
	field := "id"
	if e.Kind != "task" {
		field = e.Kind
	}
	msg := field + ": no " + e.Kind + " " + quote(e.Name)
	switch {
	case e.Reason != "":
		msg += "; " + e.Reason
	case len(e.Suggestions) > 0:
		msg += "; did you mean " + strings.Join(e.Suggestions, ", ") + "?"
	case e.Kind == "task":
		msg += "; use task with action list to see the IDs"
	}
	return msg
}

func mcpRefused(e *matrix.RefusedError) string {
	msg := e.Reason
	if e.Field != "" {
		msg = mcpField(e.Field) + ": " + msg
	}
	if e.Override != "" {
		msg += "; pass " + e.Override + ": true to do it anyway"
	}
	return msg
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }
