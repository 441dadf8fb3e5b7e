package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/matrix"
)

// StringList is a list of strings in tool input. Clients send a JSON array;
// a single comma-separated string is accepted too, because some clients (and
// models) flatten arrays into strings.
type StringList []string

// UnmarshalJSON accepts ["a","b"], "a,b" and null.
func (l *StringList) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		*l = nil
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*l = splitList(s)
		return nil
	}
	var a []string
	if err := json.Unmarshal(b, &a); err != nil {
		return errors.New("must be an array of strings")
	}
	out := make([]string, 0, len(a))
	for _, s := range a {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	*l = out
	return nil
}

func splitList(s string) []string {
	out := []string{}
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// fieldErrorf is bad tool input (agenterr.Invalid): it names the
// parameter and says how to fix it.
func fieldErrorf(field, format string, a ...any) error {
	return agenterr.Invalidf(field, format, a...)
}

// prop describes one input property: enum values, default, description. A
// property with no description is one the tool's description explains.
type prop struct {
	Desc    string
	Enum    []string
	Default any
}

// toolSpec is everything needed to register one typed tool.
type toolSpec struct {
	Tool     *mcp.Tool
	Props    map[string]prop // by JSON name
	Required []string
}

// inputSchema infers the schema of In, then applies the enums, defaults and
// descriptions of props. Arrays and objects get a plain (non-nullable) type so
// that every client (the MCP inspector converts --tool-arg values by type;
// Gemini rejects type lists) understands them.
func inputSchema[In any](props map[string]prop, required []string) (*jsonschema.Schema, error) {
	s, err := jsonschema.For[In](&jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[StringList](): {Type: "array", Items: &jsonschema.Schema{Type: "string"}},
	}})
	if err != nil {
		return nil, err
	}
	plainTypes(s, true)
	// The server refuses unknown fields itself, naming the closest one.
	s.AdditionalProperties = nil
	_, hasActions := props["action"]
	for name, p := range props {
		ps, ok := s.Properties[name]
		if !ok {
			return nil, fmt.Errorf("property %q is not a field of %T", name, *new(In))
		}
		if p.Desc != "" {
			ps.Description = p.Desc
		}
		if len(p.Enum) > 0 {
			ps.Enum = nil
			for _, v := range p.Enum {
				ps.Enum = append(ps.Enum, v)
			}
		}
		if p.Default != nil {
			if hasActions {
				// Clients fill defaults in: one would reach every action
				// (a list filtered by priority P2, an update setting it).
				return nil, fmt.Errorf("property %q: a tool with actions declares no defaults; say the default in the description", name)
			}
			b, err := json.Marshal(p.Default)
			if err != nil {
				return nil, err
			}
			ps.Default = b
		}
	}
	for name := range s.Properties {
		if _, ok := props[name]; !ok {
			return nil, fmt.Errorf("property %q of %T has no entry in props", name, *new(In))
		}
	}
	s.Required = slices.Clone(required)
	return s, nil
}

// plainTypes turns inferred ["null","array"] types into "array", and with
// objects also ["null","object"] into "object", recursively.
func plainTypes(s *jsonschema.Schema, objects bool) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && slices.Contains(s.Types, "null") && (slices.Contains(s.Types, "array") || objects) {
		for _, t := range s.Types {
			if t != "null" {
				s.Type = t
			}
		}
		s.Types = nil
	}
	for _, p := range s.Properties {
		plainTypes(p, objects)
	}
	plainTypes(s.Items, objects)
	if s.AdditionalProperties != nil {
		plainTypes(s.AdditionalProperties, objects)
	}
}

// toolFunc is a tool's logic: it returns the structured output and a short
// human-readable text. An error becomes a tool result with isError set.
type toolFunc[In, Out any] func(ctx context.Context, req *mcp.CallToolRequest, in In, raw map[string]json.RawMessage) (Out, string, error)

// addTool registers a typed tool. Unlike mcp.AddTool, input is decoded here so
// that every problem (unknown field, wrong type, bad enum value) comes back as
// a tool error naming the field and the fix, and no schema default is injected
// into actions it does not belong to.
//
// Results carry Out as structuredContent, but the tool declares no
// outputSchema: inferred from Out they were 62% of tools/list (14 of 22 KB),
// bytes every client pays on connect, and no client needs one to read
// structuredContent. The tests check each result against Out's full schema.
func addTool[In, Out any](s *mcp.Server, spec toolSpec, fn toolFunc[In, Out]) error {
	in, err := inputSchema[In](spec.Props, spec.Required)
	if err != nil {
		return fmt.Errorf("tool %s: input schema: %w", spec.Tool.Name, err)
	}
	t := *spec.Tool
	t.InputSchema = in
	names := make([]string, 0, len(in.Properties))
	for n := range in.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	required := spec.Required
	s.AddTool(&t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var v In
		raw, err := decodeArgs(req.Params.Arguments, &v, names, required)
		if err != nil {
			return errorResult(err, names), nil
		}
		o, text, err := fn(ctx, req, v, raw)
		if err != nil {
			return errorResult(err, names), nil
		}
		b, err := json.Marshal(o)
		if err != nil {
			return nil, fmt.Errorf("encode %s result: %w", t.Name, err)
		}
		return &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: text}},
			StructuredContent: json.RawMessage(b),
		}, nil
	})
	return nil
}

// decodeArgs decodes the arguments object into v, refusing unknown fields and
// wrong types with messages that name the field, and checking required ones.
func decodeArgs(args json.RawMessage, v any, names, required []string) (map[string]json.RawMessage, error) {
	raw := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(args)) > 0 && !bytes.Equal(bytes.TrimSpace(args), []byte("null")) {
		if err := json.Unmarshal(args, &raw); err != nil {
			return nil, agenterr.Invalidf("arguments", "must be a JSON object")
		}
	}
	for k := range raw {
		if !slices.Contains(names, k) {
			msg := fmt.Sprintf("unknown field; valid fields are %s", strings.Join(names, ", "))
			if s := closest(k, names); s != "" {
				msg = fmt.Sprintf("unknown field; did you mean %q? valid fields are %s", s, strings.Join(names, ", "))
			}
			return nil, agenterr.Invalidf(k, "%s", msg)
		}
	}
	for _, k := range required {
		if r, ok := raw[k]; !ok || bytes.Equal(r, []byte("null")) || bytes.Equal(r, []byte(`""`)) {
			return nil, fieldErrorf(k, "required; pass %s", k)
		}
	}
	// Drop nulls so they mean "not given".
	for k, r := range raw {
		if bytes.Equal(r, []byte("null")) {
			delete(raw, k)
		}
	}
	b, _ := json.Marshal(raw)
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(v); err != nil && err != io.EOF {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, fieldErrorf(te.Field, "must be %s, not %s", jsonTypeName(te.Type), te.Value)
		}
		// Custom unmarshalers (StringList) name no field: find it.
		for k, r := range raw {
			probe := reflect.New(reflect.TypeOf(v).Elem()).Interface()
			one, _ := json.Marshal(map[string]json.RawMessage{k: r})
			if json.Unmarshal(one, probe) != nil {
				return nil, fieldErrorf(k, "%v", unwrapJSONErr(err))
			}
		}
		return nil, agenterr.Invalidf("arguments", "%v", err)
	}
	return raw, nil
}

func unwrapJSONErr(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 && strings.HasPrefix(msg, "json:") {
		return msg[i+2:]
	}
	return msg
}

func jsonTypeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return t.String()
}

// closest returns the candidate nearest to s (matrix.Suggest's rule), if any.
func closest(s string, cands []string) string {
	if hits := matrix.Suggest(strings.ToLower(s), cands); len(hits) > 0 {
		return hits[0]
	}
	return ""
}

// given reports whether the client passed field k.
func given(raw map[string]json.RawMessage, k string) bool {
	_, ok := raw[k]
	return ok
}

// enumValue checks v against valid (case-insensitively) and returns the
// canonical spelling, or an error naming the field and the valid values.
func enumValue(field, v string, valid []string) (string, error) {
	for _, c := range valid {
		if strings.EqualFold(strings.TrimSpace(v), c) {
			return c, nil
		}
	}
	return "", fieldErrorf(field, "%q is not valid; use one of %s", v, strings.Join(valid, ", "))
}
