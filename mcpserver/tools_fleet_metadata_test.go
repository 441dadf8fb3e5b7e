package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/local"
	"github.com/agentinfra/agentinfra/fleet/metadata"
	"github.com/agentinfra/agentinfra/internal/testing/agentstub"
	"github.com/agentinfra/agentinfra/internal/testing/e2etools"
	"github.com/agentinfra/agentinfra/internal/testing/poll"
	"github.com/agentinfra/agentinfra/workspace"
)

// connectFleetMetadata is connectFleet with a metadata collector of its
// own: the real go-task, a short field timeout, no cache (every call
// collects afresh).
func connectFleetMetadata(t *testing.T, ws *workspace.Workspace, timeout time.Duration) *mcp.ClientSession {
	t.Helper()
	col := metadata.NewCollector(metadata.Options{TaskBinary: e2etools.GoBin(t, "task"), Timeout: timeout, CacheTTL: -1})
	srv, err := New(Options{Workspace: serverWS(t, ws), Getenv: testGetenv, Toolsets: []string{ToolsetFleet}, Fleet: local.Options{
		SupervisorArgv: []string{agentinfraBin(t), "agent", "run-supervisor"},
		Binary:         stubAgent(t), Env: []string{"STUB_MODE=ok"}, KillGrace: 300 * time.Millisecond, Metadata: col,
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Close(); cancel(); srv.Close() })
	return cs
}

// metadataAgent creates an idle agent whose worktree holds taskfile
// (none when ""); it returns the worktree.
func metadataAgent(t *testing.T, cs *mcp.ClientSession, ws *workspace.Workspace, name, taskfile string) string {
	t.Helper()
	var created agentOut
	if code, _ := fleetCall(t, cs, "create_agent", map[string]any{"name": name, "project": filepath.Base(ws.Root), "spec": "s"}, &created); code != 0 {
		t.Fatalf("create_agent %s: %d", name, code)
	}
	waitAgent(t, cs, name, fleet.StatusIdle)
	dir := created.Agent.Workspace.Path
	if taskfile != "" {
		if err := os.WriteFile(filepath.Join(dir, "Taskfile.yml"), []byte(taskfile), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// validated calls a tool, checks its structured content against the JSON
// schema in testdata/SCHEMA and decodes it into out.
func validated(t *testing.T, cs *mcp.ClientSession, tool, schema string, args map[string]any, out any) {
	t.Helper()
	res := call(t, cs, tool, args)
	if res.IsError {
		t.Fatalf("%s: %s", tool, text(res))
	}
	b, _ := json.Marshal(res.StructuredContent)
	sb, err := os.ReadFile(filepath.Join("testdata", schema))
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(sb, &s); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	var inst any
	json.Unmarshal(b, &inst)
	if err := rs.Validate(inst); err != nil {
		t.Fatalf("%s does not match %s: %v\n%s", tool, schema, err, b)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
}

const fullTaskfile = `version: '3'
tasks:
  branch:
    desc: The branch checked out.
    meta: { include_in_list: true }
    cmds: [git rev-parse --abbrev-ref HEAD]
  pull_request_number:
    desc: The number of the pull request.
    meta:
      include_in_list: true
    cmds: [echo 42]
  needs_rebase:
    meta: {}
    cmds: [echo no]
  test:
    desc: Runs the tests; not metadata.
    cmds: [go test ./...]
`

const partialTaskfile = `version: '3'
tasks:
  ok:
    desc: Works.
    meta: { include_in_list: true }
    cmds: [echo fine]
  fails:
    desc: gh is not logged in.
    meta: { include_in_list: true }
    cmds: ['echo "gh: To get started with GitHub CLI, please run: gh auth login" >&2; exit 4']
  hangs:
    desc: Waits for a server that never answers.
    meta: { include_in_list: true }
    cmds: ['sh -c "sleep 60 & echo \$! > child.pid; wait"']
  malformed:
    desc: meta is a string.
    meta: include_in_list
    cmds: [echo never]
`

const quietTaskfile = `version: '3'
tasks:
  ci:
    desc: CI status.
    meta: { include_in_list: false }
    cmds: ['touch ci.ran; echo green']
  owner:
    meta: {}
    cmds: [echo papi]
`

func str(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

// TestFleetMetadataShowAndList runs the real go-task for four agents and waits out a hanging field's
// 6 s timeout twice (half a minute on 2 cores): AGENTINFRA_E2E=1 only.
func TestFleetMetadataShowAndList(t *testing.T) {
	e2etools.E2EOnly(t, "package fleet/metadata collects, times out and scopes the fields, and fleet/coder's TestMetadataFromApp serves them")
	ws := fleetWorkspace(t, 0)
	cs := connectFleetMetadata(t, ws, 6*time.Second)
	metadataAgent(t, cs, ws, "full", fullTaskfile)
	metadataAgent(t, cs, ws, "bare", "")
	partialDir := metadataAgent(t, cs, ws, "partial", partialTaskfile)
	quietDir := metadataAgent(t, cs, ws, "quiet", quietTaskfile)

	t.Run("show full metadata", func(t *testing.T) {
		var out agentOut
		validated(t, cs, "show_agent", "show_agent_metadata.schema.json", map[string]any{"agent_name": "full"}, &out)
		md := out.Agent.Metadata
		if out.Agent.MetadataCount != 3 || len(md) != 3 {
			t.Fatalf("metadata_count %d, %d fields: want the 3 meta tasks", out.Agent.MetadataCount, len(md))
		}
		if f := md["branch"]; str(f.Value) != "agent/full" || f.Error != nil || !f.Schema.IncludeInList || f.Schema.Description != "The branch checked out." {
			t.Errorf("branch: %+v (%s)", f, str(f.Value))
		}
		if f := md["pull_request_number"]; str(f.Value) != "42" || !f.Schema.IncludeInList {
			t.Errorf("pull_request_number: %s", str(f.Value))
		}
		// A value that is a JSON number is one, in show and list alike.
		var shown struct {
			Agent struct {
				Metadata map[string]struct{ Value any } `json:"metadata"`
			} `json:"agent"`
		}
		var listed struct {
			Agents []struct {
				Name     string         `json:"name"`
				Metadata map[string]any `json:"metadata"`
			} `json:"agents"`
		}
		b, _ := json.Marshal(call(t, cs, "show_agent", map[string]any{"agent_name": "full"}).StructuredContent)
		json.Unmarshal(b, &shown)
		lb, _ := json.Marshal(call(t, cs, "list_agents", map[string]any{}).StructuredContent)
		json.Unmarshal(lb, &listed)
		if md := shown.Agent.Metadata; md["pull_request_number"].Value != float64(42) || md["branch"].Value != "agent/full" {
			t.Errorf("show: the value 42 is not the number 42 (or a text is not text): %s", b)
		}
		for _, a := range listed.Agents {
			if v := a.Metadata["pull_request_number"]; a.Name == "full" && v != float64(42) && v != nil { // nil: timed out on a loaded machine
				t.Errorf("list: the value 42 is %#v: %s", v, lb)
			}
		}
		if f := md["needs_rebase"]; str(f.Value) != "no" || f.Schema.IncludeInList || f.Schema.Description != "No description" {
			t.Errorf("needs_rebase: %+v", f)
		}
	})

	t.Run("show without a Taskfile", func(t *testing.T) {
		var out agentOut
		validated(t, cs, "show_agent", "show_agent_metadata.schema.json", map[string]any{"agent_name": "bare"}, &out)
		if out.Agent.MetadataCount != 0 || out.Agent.Metadata == nil || len(out.Agent.Metadata) != 0 || out.Agent.MetadataError != "" {
			t.Fatalf("no Taskfile: count %d, metadata %v, error %q", out.Agent.MetadataCount, out.Agent.Metadata, out.Agent.MetadataError)
		}
	})

	t.Run("show partial failure", func(t *testing.T) {
		var out agentOut
		t0 := time.Now()
		validated(t, cs, "show_agent", "show_agent_metadata.schema.json", map[string]any{"agent_name": "partial"}, &out)
		took := time.Since(t0)
		md := out.Agent.Metadata
		if out.Agent.MetadataCount != 4 {
			t.Fatalf("metadata_count %d, want 4", out.Agent.MetadataCount)
		}
		if f := md["ok"]; str(f.Value) != "fine" || f.Error != nil {
			t.Errorf("ok: %s / %s", str(f.Value), str(f.Error))
		}
		if f := md["fails"]; f.Value != nil || !strings.Contains(str(f.Error), "gh auth login") {
			t.Errorf("fails: %s / %s: want stderr's tail", str(f.Value), str(f.Error))
		}
		if f := md["hangs"]; f.Value != nil || !strings.Contains(str(f.Error), "timed out after 6s") {
			t.Errorf("hangs: %s / %s", str(f.Value), str(f.Error))
		}
		if f := md["malformed"]; f.Value != nil || !strings.Contains(str(f.Error), "malformed meta") || f.Schema.Description != "meta is a string." {
			t.Errorf("malformed: %+v / %s", f, str(f.Error))
		}
		if took < 6*time.Second { // the hanging field ends in the timeout, not before
			t.Errorf("show_agent took %v: want the 6s timeout", took)
		}
		b, err := os.ReadFile(filepath.Join(partialDir, "child.pid"))
		if err != nil {
			t.Fatalf("the hanging field did not start its child: %v", err)
		}
		if pid, _ := strconv.Atoi(strings.TrimSpace(string(b))); !processGone(pid, 2*time.Second) {
			t.Errorf("the hanging field's child %d still runs", pid)
		}
	})

	t.Run("list with mixed and no include_in_list", func(t *testing.T) {
		var out fleet.ListResult
		validated(t, cs, "list_agents", "list_agents_metadata.schema.json", map[string]any{}, &out)
		got := map[string]fleet.AgentSummary{}
		for _, a := range out.Agents {
			got[a.Name] = a
		}
		want := map[string]struct {
			count  int
			values map[string]string
		}{
			"full":    {3, map[string]string{"branch": "agent/full", "pull_request_number": "42"}},
			"bare":    {0, map[string]string{}},
			"partial": {4, map[string]string{"ok": "fine", "fails": "<nil>", "hangs": "<nil>"}},
			"quiet":   {2, map[string]string{}},
		}
		for name, w := range want {
			a := got[name]
			if a.MetadataCount == nil || *a.MetadataCount != w.count || len(a.Metadata) != len(w.values) {
				t.Errorf("%s: count %v, metadata %v; want %d and %v", name, a.MetadataCount, a.Metadata, w.count, w.values)
				continue
			}
			for k, v := range w.values {
				if p, ok := a.Metadata[k]; !ok || str(p) != v {
					t.Errorf("%s.%s = %s, want %s", name, k, str(p), v)
				}
			}
		}
		if _, err := os.Stat(filepath.Join(quietDir, "ci.ran")); err == nil {
			t.Error("list_agents ran a field it does not show (quiet's ci)")
		}
	})

	t.Run("list without metadata", func(t *testing.T) {
		var out fleet.ListResult
		validated(t, cs, "list_agents", "list_agents_metadata.schema.json", map[string]any{"include_metadata": false}, &out)
		for _, a := range out.Agents {
			if a.MetadataCount != nil || a.Metadata != nil {
				t.Errorf("%s: metadata %v %v with include_metadata false", a.Name, a.MetadataCount, a.Metadata)
			}
		}
		wantFleetError(t, cs, "list_agents", map[string]any{"include_metadata": "no"}, 400, "include_metadata")
	})
}

// processGone waits until pid no longer runs (a zombie counts as gone).
func processGone(pid int, within time.Duration) bool {
	if runtime.GOOS != "linux" {
		return true
	}
	return poll.Until(within, func() bool { return agentstub.ProcessGone(pid) })
}

// stubAgent builds dispatch's stub agent CLI (named gemini).
func stubAgent(t testing.TB) string {
	t.Helper()
	return agentstub.Named(t, "gemini")
}
