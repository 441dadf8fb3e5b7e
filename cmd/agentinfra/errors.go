package main

import (
	"errors"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/matrix"
)

// cliMessage renders an error in the CLI's words. The domain's typed errors
// name fields and overrides, not flags: a field becomes the command's flag
// (priority → --priority, a column → --set), an override becomes a flag
// (force → --force), an unknown task ID says how to list the IDs. The text of
// wrapping errors around a typed one is kept.
func cliMessage(cmd *cobra.Command, err error) string {
	msg := err.Error()
	var (
		inv *matrix.InvalidError
		nf  *matrix.NotFoundError
		ref *matrix.RefusedError
	)
	var typed error
	var words string
	switch {
	case errors.As(err, &inv):
		typed, words = inv, cliInvalid(cmd, inv)
	case errors.As(err, &nf):
		typed, words = nf, cliNotFound(nf)
	case errors.As(err, &ref):
		typed, words = ref, cliRefused(ref)
	default:
		return msg
	}
	if i := strings.LastIndex(msg, typed.Error()); i >= 0 {
		return msg[:i] + words + msg[i+len(typed.Error()):]
	}
	return words
}

func cliInvalid(cmd *cobra.Command, e *matrix.InvalidError) string {
	var b strings.Builder
	b.WriteString("invalid " + cliFlag(cmd, e.Field))
	if e.Value != "" {
		b.WriteString(" " + quote(e.Value))
	}
	if e.Reason != "" {
		b.WriteString(": " + e.Reason)
	}
	if len(e.Valid) > 0 {
		b.WriteString("; valid: " + strings.Join(e.Valid, ", "))
	}
	return b.String()
}

func cliNotFound(e *matrix.NotFoundError) string {
	msg := "no " + e.Kind + " " + quote(e.Name)
	switch {
	case e.Reason != "":
		msg += "; " + e.Reason
	case len(e.Suggestions) > 0:
		msg += "; did you mean " + strings.Join(e.Suggestions, ", ") + "?"
	case e.Kind == "task":
		msg += "; run `agentinfra task list` to see the IDs"
	}
	return msg
}

func cliRefused(e *matrix.RefusedError) string {
	msg := e.Reason
	if e.Override != "" {
		msg += "; pass --" + strings.ReplaceAll(e.Override, "_", "-") + " to do it anyway"
	}
	return msg
}

// cliFlag names the flag (or argument) that gives a domain field.
func cliFlag(cmd *cobra.Command, field string) string {
	switch field {
	case "id":
		return "task ID"
	case "column":
		return "--set column"
	case "created", "updated":
		return "--set " + strings.ToUpper(field[:1]) + field[1:]
	}
	flag := strings.ReplaceAll(field, "_", "-")
	if cmd != nil && cmd.Flags().Changed("set") && !cmd.Flags().Changed(flag) {
		return "--set " + field // the value came in through --set COLUMN=VALUE
	}
	if cmd != nil && cmd.Flags().Lookup(flag) == nil {
		if strings.HasSuffix(flag, "s") && cmd.Flags().Lookup(strings.TrimSuffix(flag, "s")) != nil {
			return "--" + strings.TrimSuffix(flag, "s") // skills → --skill on task list
		}
		return field
	}
	return "--" + flag
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

// isDomainUsageError tells the errors that exit 2: a value the domain
// refused, or a refusal that a flag overrides.
func isDomainUsageError(err error) bool {
	var ref *matrix.RefusedError
	return errors.Is(err, matrix.ErrInvalid) || errors.As(err, &ref) && ref.Override != "" && ref.Field != ""
}
