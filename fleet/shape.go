package fleet

// shape.go holds what makes every backend's results the fleet design's
// shapes: one timestamp format, the current and last task as summaries
// beside the run, and metadata values typed as JSON (docs/fleet.md,
// "Differences from the fleet design").

import (
	"encoding/json"
	"time"

	"github.com/agentinfra/agentinfra/fleet/metadata"
)

// Timestamp returns t as every fleet result gives it: UTC, to the
// millisecond (RFC 3339 in JSON: "2026-11-21T14:07:00.123Z", or without
// the fraction when it is zero). Coder's times come with the server's
// offset and the local clock's with nanoseconds; neither reaches a result.
func Timestamp(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC().Truncate(time.Millisecond)
}

func timestampPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := Timestamp(*t)
	return &u
}

// Normalized returns the run with its timestamps as results give them.
func (r TaskRun) Normalized() TaskRun {
	r.CreatedAt, r.StartedAt, r.CompletedAt = Timestamp(r.CreatedAt), timestampPtr(r.StartedAt), timestampPtr(r.CompletedAt)
	return r
}

// Finish gives the agent the fields derived from the others, as both
// backends must: current_task is the current run's summary (null when
// idle), last_task the summary of the latest ended run (last; nil when
// none), workspace_id the workspace's ID, and every timestamp in the
// results' format.
func (a *Agent) Finish(run *TaskRun, last *TaskRun) {
	a.CurrentRun, a.CurrentTask, a.LastTask, a.LastRun = nil, nil, nil, nil
	if run != nil {
		r := run.Normalized()
		s := r.Summary
		a.CurrentRun, a.CurrentTask = &r, &s
	}
	if last != nil {
		l := last.Normalized()
		s := l.Summary
		a.LastTask, a.LastRun = &s, &l
	}
	a.WorkspaceID = a.Workspace.ID
	a.CreatedAt, a.UpdatedAt = Timestamp(a.CreatedAt), Timestamp(a.UpdatedAt)
}

// NormalizeRuns puts every run's timestamps in the results' format.
func NormalizeRuns(runs []TaskRun) []TaskRun {
	for i := range runs {
		runs[i] = runs[i].Normalized()
	}
	return runs
}

// TypedValue is a metadata value as results give it: a value that is a
// JSON number, true, false or null is that JSON value (the task printing
// 810 gives 810, as the fleet design's example has it), any other text is
// a string, and no value is null. Objects and arrays stay strings.
func TypedValue(v *string) any {
	if v == nil {
		return nil
	}
	s := *v
	switch s {
	case "true":
		return true
	case "false":
		return false
	case "null":
		return nil
	}
	if s != "" && (s[0] == '-' || s[0] >= '0' && s[0] <= '9') && json.Valid([]byte(s)) {
		return json.Number(s) // a valid JSON text starting so is a number
	}
	return s
}

// typedField is a metadata field in JSON, its value typed.
type typedField struct {
	Value  any             `json:"value"`
	Error  *string         `json:"error"`
	Schema metadata.Schema `json:"schema"`
}

// MarshalJSON gives each field's value typed (TypedValue).
func (m MetadataFields) MarshalJSON() ([]byte, error) {
	if m == nil {
		return []byte("{}"), nil
	}
	out := make(map[string]typedField, len(m))
	for k, f := range m {
		out[k] = typedField{Value: TypedValue(f.Value), Error: f.Error, Schema: f.Schema}
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads fields whose values are typed or strings.
func (m *MetadataFields) UnmarshalJSON(b []byte) error {
	var raw map[string]struct {
		Value  json.RawMessage `json:"value"`
		Error  *string         `json:"error"`
		Schema metadata.Schema `json:"schema"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*m = MetadataFields{}
	for k, f := range raw {
		(*m)[k] = metadata.Field{Value: untyped(f.Value), Error: f.Error, Schema: f.Schema}
	}
	return nil
}

// ListMetadata are the include_in_list values of a list_agents row, typed
// in JSON as MetadataFields' are.
type ListMetadata map[string]*string

// MarshalJSON gives each value typed (TypedValue).
func (m ListMetadata) MarshalJSON() ([]byte, error) {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = TypedValue(v)
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads values that are typed or strings.
func (m *ListMetadata) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*m = ListMetadata{}
	for k, v := range raw {
		(*m)[k] = untyped(v)
	}
	return nil
}

// untyped is the text of a typed value (nil for null or nothing).
func untyped(v json.RawMessage) *string {
	if len(v) == 0 || string(v) == "null" {
		return nil
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return &s
	}
	s = string(v)
	return &s
}
