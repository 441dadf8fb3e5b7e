package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentinfra/agentinfra/agenterr"
)

// errorResult is every tool's error, matrix and fleet tools alike: a result
// with isError, the text "CODE: message" and the structured content
//
//	{"error": {"code": 404, "kind": "not_found", "field": "id", "message": "...",
//	           "value": ..., "valid": [...], "suggestions": [...], "holder": ..., "override": ...}}
//
// where code is the kind's HTTP status (agenterr.Kinds), field the
// parameter at fault ("" when none) and message the error in this server's
// words (messageOf). params are the tool's parameters: an override that is
// none of them is not offered. A canceled call is unavailable.
func errorResult(err error, params []string) *mcp.CallToolResult {
	e := agenterr.Of(err)
	if e.Override != "" && !slices.Contains(params, e.Override) {
		c := *e
		c.Override = ""
		e, err = &c, &c
	}
	kind := e.Kind
	if kind == agenterr.Internal && errors.Is(err, context.Canceled) {
		kind = agenterr.Unavailable
	}
	code := agenterr.CodesOf(kind).HTTP
	msg := messageOf(err)
	body := wireError{Code: code, Kind: string(kind), Field: paramOf(err), Message: msg, Value: e.Value, Valid: e.Valid,
		Suggestions: e.Suggestions, Holder: e.Holder, Override: e.Override, File: e.File, Line: e.Line, Col: e.Col}
	b, _ := json.Marshal(map[string]wireError{"error": body})
	r := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%d: %s", code, msg)}}, StructuredContent: json.RawMessage(b)}
	r.IsError = true
	return r
}

// withResultWarnings adds to a tool error what the call did nonetheless (a
// killed command's leftovers it rolled back, records it could not read):
// "warnings" next to "error" in the structured content, and one
// "warning: ..." line each after the text.
func withResultWarnings(r *mcp.CallToolResult, warnings []string) *mcp.CallToolResult {
	if len(warnings) == 0 {
		return r
	}
	var body map[string]any
	if raw, ok := r.StructuredContent.(json.RawMessage); ok && json.Unmarshal(raw, &body) == nil {
		body["warnings"] = warnings
		b, _ := json.Marshal(body)
		r.StructuredContent = json.RawMessage(b)
	}
	if len(r.Content) > 0 {
		if tc, ok := r.Content[0].(*mcp.TextContent); ok {
			tc.Text += "\nwarning: " + strings.Join(warnings, "\nwarning: ")
		}
	}
	return r
}

// wireError is the "error" object of a tool error's structured content.
type wireError struct {
	Code        int      `json:"code"`
	Kind        string   `json:"kind"`
	Field       string   `json:"field"`
	Message     string   `json:"message"`
	Value       string   `json:"value,omitempty"`
	Valid       []string `json:"valid,omitempty"`
	Suggestions []string `json:"suggestions,omitempty"`
	Holder      string   `json:"holder,omitempty"`
	Override    string   `json:"override,omitempty"`
	File        string   `json:"file,omitempty"`
	Line        int      `json:"line,omitempty"`
	Col         int      `json:"col,omitempty"`
}

// setFieldsError is a domain error about a column the client gave in
// set_fields, under the key it used there.
type setFieldsError struct {
	key string
	err *agenterr.Error
}

func (e *setFieldsError) Error() string { return e.err.Error() }
func (e *setFieldsError) Unwrap() error { return e.err }

// paramOf is the parameter an error is about.
func paramOf(err error) string {
	var sf *setFieldsError
	if errors.As(err, &sf) {
		return "set_fields"
	}
	return mcpField(agenterr.Of(err).Field)
}

// messageOf renders an error in the words of an MCP client, from its
// fields: a domain field becomes this server's parameter (priority →
// priority, a column → set_fields), an override becomes a parameter
// (force → force: true), an unknown task ID points at action list. Only
// the typed error is rendered; text wrapped around it is not.
func messageOf(err error) string {
	var sf *setFieldsError
	if errors.As(err, &sf) {
		return "set_fields: " + sf.key + ": " + invalidWords(sf.err)
	}
	e := agenterr.Of(err)
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.Where() + ": ")
	}
	field := mcpField(e.Field)
	switch {
	case e.Kind == agenterr.Invalid && (e.Value != "" || len(e.Valid) > 0):
		b.WriteString(field + ": ")
		if e.Field == "column" || e.Field == "created" || e.Field == "updated" {
			b.WriteString(e.Field + " ")
		}
		b.WriteString(invalidWords(e))
	case e.Kind == agenterr.NotFound && e.What != "":
		if e.What == "task" && field == "" {
			field = "id"
		}
		b.WriteString(field + ": no " + e.What + " " + quote(e.Value))
		switch {
		case e.Reason != "":
			b.WriteString("; " + e.Reason)
		case len(e.Suggestions) > 0:
			b.WriteString("; did you mean " + strings.Join(e.Suggestions, ", ") + "?")
		case e.What == "task":
			b.WriteString("; use task with action list to see the IDs")
		}
	default:
		if field != "" {
			b.WriteString(field + ": ")
		}
		b.WriteString(e.Reason)
		if c := e.Cause(); c != "" {
			b.WriteString(": " + c)
		}
		if e.Override != "" {
			b.WriteString("; pass " + e.Override + ": true to do it anyway")
		}
	}
	return b.String()
}

// invalidWords is an invalid value without its parameter: `"P9" is not
// valid: unknown priority; use one of P1, P2`.
func invalidWords(e *agenterr.Error) string {
	var b strings.Builder
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

// mcpField is the parameter that carries a domain field.
func mcpField(field string) string {
	switch field {
	case "column", "created", "updated":
		return "set_fields"
	}
	return field
}

// asField names field as the parameter at fault of err, keeping its kind:
// an unknown mode given in mode is a not_found on mode.
func asField(field string, err error) error {
	if e := agenterr.As(err); e != nil {
		return agenterr.WithField(err, field)
	}
	return &agenterr.Error{Kind: agenterr.KindOf(err), Field: field, Reason: err.Error()}
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }
