package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/internal/termsafe"
	"github.com/agentinfra/agentinfra/matrix"
)

// ReportError writes err on w the CLI's way and returns the exit code: the
// kind's (agenterr.Kinds: 2 invalid, 3 not found, 4 conflict, 5 refused, 6
// unavailable, 7 forbidden, 1 anything else), 2 for a usage error, an exitError's own.
// With asJSON the error is one JSON object (errorJSON) instead of the
// "error: ..." line. cmd is the command that ran (nil when none did).
func ReportError(w io.Writer, cmd *cobra.Command, err error, asJSON bool) int {
	var (
		ee   *ExitError
		ue   *usageError
		code int
		kind string
		msg  string
		e    *agenterr.Error
	)
	switch {
	case errors.As(err, &ee):
		code, msg, kind = ee.Code, ee.Msg, string(agenterr.Internal)
		if msg == "" || !asJSON && len(ee.diagnostics) > 0 {
			return code // the command printed what went wrong
		}
	case errors.As(err, &ue):
		code, msg, kind = 2, err.Error(), "usage"
	default:
		e = agenterr.Of(err)
		code, msg, kind = agenterr.CodesOf(e.Kind).Exit, cliMessage(cmd, err), string(e.Kind)
	}
	var warned *warnedError
	errors.As(err, &warned)
	if !asJSON {
		if warned != nil {
			for _, t := range warned.warnings {
				fmt.Fprintln(w, "warning:", termsafe.Text(t))
			}
		}
		// A message may quote what an agent wrote (a file name, a task's
		// text): shown inert (termsafe).
		fmt.Fprintln(w, "error:", termsafe.Text(msg))
		return code
	}
	out := errorJSON{Kind: kind, ExitCode: code, Message: msg}
	if warned != nil {
		out.Warnings = warned.warnings
	}
	if kind == "usage" {
		out.Code = 400
	} else {
		out.Code = agenterr.CodesOf(agenterr.Kind(kind)).HTTP
	}
	if e != nil {
		out.Field, out.Value, out.Valid, out.Suggestions = e.Field, e.Value, e.Valid, e.Suggestions
		out.Holder, out.Override, out.File, out.Line, out.Col = e.Holder, e.Override, e.File, e.Line, e.Col
	}
	if ee != nil {
		out.Diagnostics = ee.diagnostics
	}
	b, _ := json.Marshal(map[string]errorJSON{"error": out})
	fmt.Fprintln(w, string(b))
	return code
}

// errorJSON is the "error" object a command given --json writes on stderr:
// the kind, its code (the HTTP status, the MCP tool error's code) and its
// exit status, the message in the CLI's words, and the domain error's
// fields (field is the domain name: "priority", "agent_name").
type errorJSON struct {
	Kind        string   `json:"kind"`
	Code        int      `json:"code"`
	ExitCode    int      `json:"exit_code"`
	Message     string   `json:"message"`
	Field       string   `json:"field,omitempty"`
	Value       string   `json:"value,omitempty"`
	Valid       []string `json:"valid,omitempty"`
	Suggestions []string `json:"suggestions,omitempty"`
	Holder      string   `json:"holder,omitempty"`
	Override    string   `json:"override,omitempty"`
	File        string   `json:"file,omitempty"`
	Line        int      `json:"line,omitempty"`
	Col         int      `json:"col,omitempty"`
	// Diagnostics are the problems behind the error, as validate prints
	// them (task list's rows it could not read).
	Diagnostics []matrix.Diagnostic `json:"diagnostics,omitempty"`
	// Warnings are what the failed command did nonetheless (a killed
	// command's leftovers it rolled back), as its result would carry them.
	Warnings []string `json:"warnings,omitempty"`
}

// warnedError is an error that comes with warnings: what the command did
// before it failed. The CLI prints them before the error, or puts them in
// the JSON error.
type warnedError struct {
	err      error
	warnings []string
}

func (e *warnedError) Error() string { return e.err.Error() }
func (e *warnedError) Unwrap() error { return e.err }

// WithWarnings attaches warnings to err (err itself when there are none).
func WithWarnings(err error, warnings []string) error {
	if err == nil || len(warnings) == 0 {
		return err
	}
	return &warnedError{err: err, warnings: warnings}
}

// wantsJSON reports whether the command asked for JSON output: --json, or
// validate's --format json. args are the command line, for a flag error
// that stopped cobra before it set the flags.
func wantsJSON(cmd *cobra.Command, args []string) bool {
	if cmd != nil {
		if f := cmd.Flags().Lookup("json"); f != nil && f.Changed {
			return f.Value.String() == "true"
		}
		if f := cmd.Flags().Lookup("format"); f != nil && f.Changed && cmd.Name() == "validate" {
			return f.Value.String() == "json"
		}
	}
	for i, a := range args {
		switch {
		case a == "--":
			return false
		case a == "--json" || a == "--json=true" || a == "--format=json":
			return true
		case a == "--format" && i+1 < len(args) && args[i+1] == "json":
			return true
		}
	}
	return false
}

// cliMessage renders a domain error in the CLI's words, from its fields
// (the text of errors wrapped around it is not kept): a field becomes the
// command's flag (priority → --priority, a column → --set, agent_name →
// NAME), an override becomes a flag (force → --force), an unknown task ID
// says how to list the IDs, a config key comes with its file and line.
func cliMessage(cmd *cobra.Command, err error) string {
	e := agenterr.Of(err)
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.Where() + ": ")
		if e.Field != "" && e.Field != "config" {
			b.WriteString(e.Field + ": ")
		}
		b.WriteString(e.Reason)
		return b.String()
	}
	switch {
	case e.Kind == agenterr.Invalid && e.Field != "":
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
	case e.Kind == agenterr.NotFound && e.What != "":
		b.WriteString("no " + e.What + " " + quote(e.Value))
		switch {
		case e.Reason != "":
			b.WriteString("; " + e.Reason)
		case len(e.Suggestions) > 0:
			b.WriteString("; did you mean " + strings.Join(e.Suggestions, ", ") + "?")
		case e.What == "task":
			b.WriteString("; run `agentinfra task list` to see the IDs")
		case e.What == "request":
			b.WriteString("; `agentinfra inbox` lists the pending requests")
		case e.What == "session":
			b.WriteString("; `agentinfra session list` lists the sessions")
		}
	default:
		b.WriteString(e.Reason)
		if c := e.Cause(); c != "" {
			b.WriteString(": " + c)
		}
	}
	if e.Override != "" {
		b.WriteString("; pass --" + strings.ReplaceAll(e.Override, "_", "-") + " to do it anyway")
	}
	return b.String()
}

// cliFlag names the flag (or argument) that gives a domain field.
func cliFlag(cmd *cobra.Command, field string) string {
	if f := fleetFlags[field]; f != "" {
		return f
	}
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

// fleetFlags names the flag (or argument) of each fleet input field.
var fleetFlags = map[string]string{
	"name": "NAME", "agent_name": "NAME", "task_id": "--task", "task_description": "TEXT", "page_size": "--page-size",
	"status_filter": "--status", "project_filter": "--project",
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }
