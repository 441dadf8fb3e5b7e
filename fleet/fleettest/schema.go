package fleettest

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// fleetSchema holds the JSON schema of each of the nine fleet tools'
// results, under $defs/{tool}: the fleet design's fields with the
// differences docs/fleet.md lists. Every object is closed, so a field
// added without a word in the docs fails.
//
//go:embed schema/fleet.schema.json
var fleetSchema []byte

// DesignTools are the nine tools of the fleet design (show_agent_logs is
// agentinfra's own).
var DesignTools = []string{"create_agent", "list_agents", "show_agent", "show_agent_task_history", "delete_agent",
	"start_agent_task", "stop_agent_task", "list_agent_roles", "list_agent_projects"}

// CheckResult checks the JSON of one tool's result (a Go value marshaled,
// or JSON bytes) against the tool's schema.
func CheckResult(tool string, result any) error {
	b, ok := result.([]byte)
	if !ok {
		var err error
		if b, err = json.Marshal(result); err != nil {
			return err
		}
	}
	var doc map[string]any
	if err := json.Unmarshal(fleetSchema, &doc); err != nil {
		return err
	}
	if _, ok := doc["$defs"].(map[string]any)[tool]; !ok {
		return fmt.Errorf("no schema for tool %q", tool)
	}
	doc["$ref"] = "#/$defs/" + tool
	sb, _ := json.Marshal(doc)
	var s jsonschema.Schema
	if err := json.Unmarshal(sb, &s); err != nil {
		return err
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return err
	}
	var inst any
	if err := json.Unmarshal(b, &inst); err != nil {
		return fmt.Errorf("%s: the result is not JSON: %w", tool, err)
	}
	if err := rs.Validate(inst); err != nil {
		return fmt.Errorf("%s's result does not match the design's schema: %w\n%s", tool, err, b)
	}
	return nil
}

// ValidateResult fails t unless result matches tool's schema.
func ValidateResult(t testing.TB, tool string, result any) {
	t.Helper()
	if err := CheckResult(tool, result); err != nil {
		t.Fatal(err)
	}
}
