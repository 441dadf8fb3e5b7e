package full

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/contain"
)

// doctor says what the machine offers: here the kernel's own Landlock ABI
// and the allowlist's env mode.
func TestDoctorReportsLandlockAndTheAgentEnvironment(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "config")
	os.MkdirAll(config, 0o700)
	os.WriteFile(filepath.Join(config, "allowlist.yaml"), []byte("supervision:\n  env: allowlist\n  pass_env: [GOPATH]\n"), 0o600)
	code, out, errOut := runCLI(t, dir, cliOpts{Env: map[string]string{"AGENTINFRA_CONFIG_DIR": config}}, "doctor", "--json")
	if code != 0 {
		t.Fatalf("doctor: %d %s", code, errOut)
	}
	var got struct {
		Findings []Finding
		OK       bool
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || !got.OK || len(got.Findings) != len(DoctorChecks) {
		t.Fatalf("%v: %s", err, out)
	}
	byName := map[string]Finding{}
	for _, f := range got.Findings {
		byName[f.Check] = f
	}
	ll := byName["landlock"]
	if s := contain.Supported(); s.ABI > 0 {
		if ll.Status != DoctorOK || !strings.Contains(ll.Detail, fmt.Sprintf("ABI %d", s.ABI)) {
			t.Errorf("landlock: %+v, the kernel has ABI %d", ll, s.ABI)
		}
	} else if ll.Status != DoctorWarn || ll.Fix == "" {
		t.Errorf("landlock without Landlock: %+v", ll)
	}
	if env := byName["agent-environment"]; !strings.HasPrefix(env.Detail, "allowlist") || !strings.Contains(env.Detail, "GOPATH") {
		t.Errorf("agent-environment: %+v", env)
	}
}

// A failed check fails the command (exit 1), after every finding is shown.
func TestDoctorFailsOnAFailedCheck(t *testing.T) {
	f, out, _ := testFactory(t.TempDir(), cliOpts{})
	o := &DoctorOptions{IO: f.IO, Getenv: f.Getenv, Checks: []DoctorCheck{
		{"broken", func(context.Context, *DoctorOptions) Finding {
			return Finding{Status: DoctorFail, Detail: "it is broken", Fix: "mend it"}
		}},
		{"fine", func(context.Context, *DoctorOptions) Finding { return Finding{Status: DoctorOK, Detail: "all good"} }},
	}}
	err := doctorRun(context.Background(), o)
	if err == nil || !strings.Contains(out.String(), "fix: mend it") || !strings.Contains(out.String(), "all good") {
		t.Fatalf("err %v, printed:\n%s", err, out)
	}
}
