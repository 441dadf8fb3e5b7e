package fleettest

import (
	"strings"
	"testing"
)

// The schema is strict where the design is: these results, each off in one
// way issue 20 found, are refused.
func TestSchemaRefusesWhatTheDesignDoesNot(t *testing.T) {
	run := `{"id":"Papi-1","agent_name":"Papi","summary":"s","status":"running","source":"human","created_at":"2026-11-21T14:07:00.123Z","started_at":null,"completed_at":null}`
	ok := `{"task":` + run + `,"agent_status":"busy","message":"m"}`
	if err := CheckResult("start_agent_task", []byte(ok)); err != nil {
		t.Fatalf("a good result is refused: %v", err)
	}
	for what, bad := range map[string]string{
		"nanoseconds":     strings.Replace(ok, ".123Z", ".123456789Z", 1),
		"an offset":       strings.Replace(ok, ".123Z", ".123+01:00", 1),
		"an unknown run":  strings.Replace(ok, `"running"`, `"queued"`, 1),
		"an extra field":  strings.Replace(ok, `"message":"m"`, `"message":"m","extra":1`, 1),
		"no agent_status": strings.Replace(ok, `"agent_status":"busy",`, "", 1),
	} {
		if err := CheckResult("start_agent_task", []byte(bad)); err == nil {
			t.Errorf("a result with %s passes", what)
		}
	}
	agent := `{"agent":{"name":"papi","status":"busy","current_task":` + run + `,"current_run":null,"last_task":null,"role":"coder","project":"p","spec":"s","cli":"gemini",
		"created_at":"2026-11-21T14:07:00Z","updated_at":"2026-11-21T14:07:00Z","workspace_id":"w","workspace":{"id":"w","path":"/w","branch":"agent/papi"},"metadata_count":0,"metadata":{}},"message":"m"}`
	if err := CheckResult("show_agent", []byte(agent)); err == nil {
		t.Error("a current_task that is a run object passes (the design has the summary)")
	}
	if err := CheckResult("show_agent", []byte(strings.Replace(agent, `"current_task":`+run, `"current_task":"s"`, 1))); err != nil {
		t.Errorf("a good show_agent result is refused: %v", err)
	}
	if err := CheckResult("no_such_tool", []byte(`{}`)); err == nil {
		t.Error("a tool without a schema passes")
	}
}
