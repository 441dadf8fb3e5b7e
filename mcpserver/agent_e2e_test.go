package mcpserver

// The agent toolset through a real MCP client (the Go SDK's, over stdio)
// and a real `agentinfra serve --toolsets agent` process; the person who
// decides is `agentinfra approve|reject` run as another process, as from a
// terminal.

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentinfra/agentinfra/internal/testing/e2etools"
	"github.com/agentinfra/agentinfra/internal/textdiff"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision/agentside"
	"github.com/agentinfra/agentinfra/workspace"
)

var agentToolNames = []string{"accept_diff", "ask_approval", "check_auto_approve", "forward_prompt", "heartbeat",
	"recover_state", "remote_log", "set_operational_mode", "wait_for_instruction"}

// agentServe starts `agentinfra serve --toolsets agent` on ws as person ana
// and connects the SDK's client to it, named client.
func agentServe(t *testing.T, ws *workspace.Workspace, client string, extra ...string) *mcp.ClientSession {
	t.Helper()
	bin := agentinfraBin(t)
	cmd := exec.Command(bin, append([]string{"serve", "--root", ws.Root, "--toolsets", "agent"}, extra...)...)
	cmd.Env = append(serveEnv(), "AGENTINFRA_USER=ana")
	cmd.Stderr = os.Stderr
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: client, Version: "v1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// agentCall calls a tool with a deadline and decodes its structured content
// (error results too) into out.
func agentCall(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, out any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	if out != nil {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, b)
		}
	}
	return res
}

// pendingRequest waits until the workspace has a pending request and returns it.
func pendingRequest(t *testing.T, ws *workspace.Workspace) store.PendingView {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := store.OpenWorkspace(ctx, ws, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	changes, err := st.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for {
		p, err := st.Pending(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(p) > 0 {
			return p[0]
		}
		select {
		case <-ctx.Done():
			t.Fatal("no request became pending")
		case <-changes:
		}
	}
}

// terminal runs `agentinfra ARGS...` as person ana in ws, as from a terminal.
func terminal(t *testing.T, ws *workspace.Workspace, args ...string) string {
	t.Helper()
	cmd := exec.Command(agentinfraBin(t), append([]string{"--root", ws.Root}, args...)...)
	cmd.Env = append(serveEnv(), "AGENTINFRA_USER=ana")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("agentinfra %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// askAsync calls ask_approval in the background.
func askAsync(t *testing.T, cs *mcp.ClientSession, args map[string]any) <-chan agentside.Verdict {
	done := make(chan agentside.Verdict, 1)
	go func() {
		var v agentside.Verdict
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask_approval", Arguments: args})
		if err != nil || res.IsError {
			t.Errorf("ask_approval: %v %s", err, textOf(res))
		} else {
			b, _ := json.Marshal(res.StructuredContent)
			json.Unmarshal(b, &v)
		}
		done <- v
	}()
	return done
}

func textOf(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	return text(res)
}

func diffOf(t *testing.T, name, old, new string) string {
	t.Helper()
	d, err := textdiff.Diff(name, old, new)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestAgentToolsE2E(t *testing.T) {
	if os.Getenv(e2etools.EnvE2E) != "1" { // the real server, a request per verdict, a client's session to its end: half a minute on 2 cores
		t.Skipf("end-to-end, runs with %s=1", e2etools.EnvE2E)
	}
	ws := newWorkspace(t, 0)
	const v1 = "package app\n\nfunc Answer() int {\n\treturn 41\n}\n"
	const v2 = "package app\n\nfunc Answer() int {\n\treturn 42\n}\n"
	file := filepath.Join(ws.Root, "src", "app.go")
	writeFile(t, file, v1)
	cs := agentServe(t, ws, "claude-code-e2e")

	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, agentToolNames) {
		t.Fatalf("--toolsets agent lists %v, want %v (and no tool that decides)", names, agentToolNames)
	}

	// ask → approved from the terminal → accept_diff writes the file.
	done := askAsync(t, cs, map[string]any{"title": "Fix the answer", "description": "off by one", "file": "src/app.go",
		"diff": diffOf(t, "src/app.go", v1, v2), "risk": "low"})
	p := pendingRequest(t, ws)
	if p.CLI != agentside.CLI || p.Agent != "claude-code-e2e" || p.Owner != "ana" || p.File != "src/app.go" || !strings.Contains(p.Diff, "+\treturn 42") || p.Kind != store.KindEdit {
		t.Fatalf("the pending request as a person sees it: %+v", p)
	}
	if readFile(t, file) != v1 {
		t.Fatal("the file changed before anyone approved")
	}
	terminal(t, ws, "approve", strconv.FormatInt(p.ID, 10))
	v := <-done
	if v.Status != agentside.VerdictApproved || v.RequestID != p.ID || v.DecidedBy != "ana" || v.Surface != store.SurfaceTerminal {
		t.Fatalf("ask_approval after approve: %+v", v)
	}
	var acc agentside.Accepted
	if res := agentCall(t, cs, "accept_diff", map[string]any{"request_id": p.ID}, &acc); res.IsError || acc.Status != agentside.AcceptApplied {
		t.Fatalf("accept_diff: %+v %s", acc, text(res))
	}
	if got := readFile(t, file); got != v2 {
		t.Fatalf("after accept_diff the file is\n%s", got)
	}
	// A second accept_diff: already consumed, the file as it is.
	if res := agentCall(t, cs, "accept_diff", map[string]any{"request_id": p.ID}, &acc); !res.IsError || acc.Status != agentside.AcceptAlreadyConsumed {
		t.Fatalf("second accept_diff: %+v %s", acc, text(res))
	}

	// The file changes after the agent asked: patch_conflict, the file as
	// the editor left it.
	const v3 = "package app\n\nfunc Answer() int {\n\treturn 43\n}\n"
	done = askAsync(t, cs, map[string]any{"title": "Again", "file": "src/app.go", "diff": diffOf(t, "src/app.go", v2, v3)})
	p = pendingRequest(t, ws)
	terminal(t, ws, "approve", strconv.FormatInt(p.ID, 10))
	if v := <-done; v.Status != agentside.VerdictApproved {
		t.Fatalf("second ask: %+v", v)
	}
	const edited = "package app\n\n// Answer is edited by a person meanwhile.\nfunc Answer() int {\n\treturn 42\n}\n"
	writeFile(t, file+".tmp", edited) // the way an editor saves: a new file renamed over
	if err := os.Rename(file+".tmp", file); err != nil {
		t.Fatal(err)
	}
	if res := agentCall(t, cs, "accept_diff", map[string]any{"request_id": p.ID}, &acc); !res.IsError || acc.Status != agentside.AcceptPatchConflict {
		t.Fatalf("accept_diff of a changed file: %+v %s", acc, text(res))
	}
	if got := readFile(t, file); got != edited {
		t.Fatalf("patch_conflict changed the file:\n%s", got)
	}

	// Paths out of the workspace are refused before anyone is asked.
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(ws.Root, "out")); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"../escape.go", "src/../../escape.go", filepath.Join(outside, "x.go"), "out/x.go", ".git/hooks/pre-commit"} {
		res := agentCall(t, cs, "ask_approval", map[string]any{"title": "escape", "file": f, "diff": diffOf(t, "x.go", "", "package x\n")}, nil)
		if !res.IsError || !strings.Contains(text(res), "outside the workspace") {
			t.Errorf("ask_approval of %s: %s", f, text(res))
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "x.go")); err == nil {
		t.Fatal("a file was written outside the workspace")
	}

	// Rejected from the terminal: the reason reaches the agent.
	done = askAsync(t, cs, map[string]any{"title": "Delete the tests", "description": "they are slow"})
	p = pendingRequest(t, ws)
	terminal(t, ws, "reject", strconv.FormatInt(p.ID, 10), "--reason", "make them faster instead")
	if v := <-done; v.Status != agentside.VerdictRejected || v.Reason != "make them faster instead" || v.DecidedBy != "ana" {
		t.Fatalf("rejected: %+v", v)
	}

	// Nobody answers: timeout, and the request is expired, never approved.
	var to agentside.Verdict
	if res := agentCall(t, cs, "ask_approval", map[string]any{"title": "Nobody looks", "timeout": "1s"}, &to); res.IsError || to.Status != agentside.VerdictTimeout {
		t.Fatalf("timeout: %+v %s", to, text(res))
	}

	// The client is its own session, ended when it disconnects.
	ctx := context.Background()
	st, err := store.OpenWorkspace(ctx, ws, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r, err := st.Request(ctx, to.RequestID)
	if err != nil || r.Status != store.StatusExpired {
		t.Fatalf("the timed-out request: %+v %v", r, err)
	}
	ses, err := st.Session(ctx, to.SessionID)
	if err != nil || ses.CLI != agentside.CLI || ses.Owner != "ana" || ses.Agent != "claude-code-e2e" || ses.Status != store.SessionActive {
		t.Fatalf("the client's session: %+v %v", ses, err)
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	changes, err := st.Changes(wctx)
	if err != nil {
		t.Fatal(err)
	}
	cs.Close()
	for ses.Status != store.SessionTerminated && wctx.Err() == nil {
		select {
		case <-changes:
		case <-wctx.Done():
		}
		ses, _ = st.Session(ctx, ses.ID)
	}
	if ses.Status != store.SessionTerminated {
		t.Fatalf("the session of a client that left: %+v", ses)
	}
}
