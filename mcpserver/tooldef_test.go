package mcpserver

import (
	"strings"
	"testing"
)

// A default in a tool with actions would be filled in by clients for every
// action (task list filtered by P2, an update setting it): registration
// refuses it, while a one-action tool may declare defaults.
func TestInputSchemaRefusesDefaultsInToolsWithActions(t *testing.T) {
	props := map[string]prop{"action": {Enum: taskActions}}
	for name := range mustSchemaProps[TaskInput](t) {
		if name != "action" {
			props[name] = prop{}
		}
	}
	if _, err := inputSchema[TaskInput](props, []string{"action"}); err != nil {
		t.Fatalf("without defaults: %v", err)
	}
	props["priority"] = prop{Default: "P2"}
	_, err := inputSchema[TaskInput](props, []string{"action"})
	if err == nil || !strings.Contains(err.Error(), `"priority"`) {
		t.Errorf("a default in a tool with actions: err = %v, want a refusal naming priority", err)
	}

	one := map[string]prop{}
	for name := range mustSchemaProps[DispatchInput](t) {
		one[name] = prop{}
	}
	one["timeout"] = prop{Default: "30m"}
	if _, err := inputSchema[DispatchInput](one, []string{"id"}); err != nil {
		t.Errorf("a default in a one-action tool: %v", err)
	}
}

func mustSchemaProps[In any](t *testing.T) map[string]bool {
	t.Helper()
	s, err := fullOutputSchema[In]() // the inferred schema, whatever its role
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for n := range s.Properties {
		names[n] = true
	}
	return names
}
