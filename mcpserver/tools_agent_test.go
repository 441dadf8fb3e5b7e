package mcpserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision/agentside"
	"github.com/agentinfra/agentinfra/workspace"
)

// agentServer serves ws with the agent toolset, as person ana.
func agentServer(t *testing.T, ws *workspace.Workspace) *Server {
	t.Helper()
	getenv := func(k string) string {
		if k == "AGENTINFRA_USER" {
			return "ana"
		}
		return testGetenv(k)
	}
	s, err := New(Options{Workspace: ws, Getenv: getenv, Toolsets: []string{ToolsetAgent}, AgentProgressEvery: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// agentConnect connects a client named name (in memory); opts may carry a
// progress handler.
func agentConnect(t *testing.T, s *Server, name string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "v0"}, opts).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Close() })
	return cs
}

func openStore(t *testing.T, ws *workspace.Workspace) *store.Store {
	t.Helper()
	st, err := store.OpenWorkspace(context.Background(), ws, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// waitUntil waits (bounded) for cond, woken by the store's changes.
func waitUntil(t *testing.T, st *store.Store, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	changes, err := st.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("never: %s", what)
		case <-changes:
		}
	}
}

func agentSession(t *testing.T, st *store.Store, name string) store.Session {
	t.Helper()
	all, err := st.Sessions(context.Background(), store.SessionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		if s.Agent == name && s.Live() {
			return s
		}
	}
	t.Fatalf("no live session of client %s: %+v", name, all)
	return store.Session{}
}

func TestAgentToolsetIsOptIn(t *testing.T) {
	ws := newWorkspace(t, 0)
	ctx := context.Background()
	for _, sets := range [][]string{nil, {ToolsetMatrix, ToolsetFleet, ToolsetSupervision}} {
		s, err := New(Options{Workspace: ws, Getenv: testGetenv, Toolsets: sets})
		if err != nil {
			t.Fatal(err)
		}
		tools, err := connectInMemory(t, s).ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range tools.Tools {
			if slices.Contains(agentToolNames, tl.Name) {
				t.Errorf("toolsets %v expose %s: the agent toolset is opt-in", sets, tl.Name)
			}
		}
	}
	tools, err := agentConnect(t, agentServer(t, ws), "c", nil).ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
		if strings.Contains(tl.Name, "approve") && tl.Name != "check_auto_approve" || strings.Contains(tl.Name, "decide") || strings.Contains(tl.Name, "reject") {
			t.Errorf("a tool that decides: %s", tl.Name)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, agentToolNames) {
		t.Fatalf("--toolsets agent: %v", names)
	}
}

// A blocking call reports progress to a client that gave a progress token,
// and a cancelled call withdraws its request.
func TestAskApprovalProgressAndCancel(t *testing.T) {
	ws := newWorkspace(t, 0)
	progress := make(chan *mcp.ProgressNotificationParams, 64)
	cs := agentConnect(t, agentServer(t, ws), "progress-client", &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			select {
			case progress <- r.Params:
			default:
			}
		}})
	st := openStore(t, ws)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	params := &mcp.CallToolParams{Name: "ask_approval", Arguments: map[string]any{"title": "Deploy to staging"}}
	params.SetProgressToken("tok-1")
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, params)
		errc <- err
	}()
	var seen []*mcp.ProgressNotificationParams
	deadline := time.After(30 * time.Second)
	for len(seen) < 2 {
		select {
		case p := <-progress:
			seen = append(seen, p)
		case <-deadline:
			t.Fatalf("progress notifications: %d", len(seen))
		}
	}
	pend, _ := st.Pending(context.Background())
	if len(pend) != 1 {
		t.Fatalf("pending: %+v", pend)
	}
	for _, p := range seen {
		if p.ProgressToken != "tok-1" || !strings.Contains(p.Message, "agentinfra approve") {
			t.Fatalf("progress: %+v", p)
		}
	}
	if seen[1].Progress <= seen[0].Progress {
		t.Errorf("progress does not increase: %v then %v", seen[0].Progress, seen[1].Progress)
	}
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("a cancelled call returned no error")
	}
	waitUntil(t, st, "the request is withdrawn", func() bool {
		r, _ := st.Request(context.Background(), pend[0].ID)
		return r.Status == store.StatusWithdrawn
	})
}

func TestForwardPromptAndSteering(t *testing.T) {
	ws := newWorkspace(t, 0)
	cs := agentConnect(t, agentServer(t, ws), "prompter", nil)
	st := openStore(t, ws)
	ctx := context.Background()

	// A question to the operator, answered with refine (as `agentinfra
	// answer ID refine TEXT` does).
	done := make(chan agentside.Answer, 1)
	go func() {
		var a agentside.Answer
		agentCall(t, cs, "forward_prompt", map[string]any{"kind": "clarification", "text": "Postgres or SQLite?"}, &a)
		done <- a
	}()
	var pv []store.PromptView
	waitUntil(t, st, "a pending prompt", func() bool { pv, _ = st.PendingPrompts(ctx); return len(pv) == 1 })
	if pv[0].Kind != store.PromptClarification || pv[0].Text != "Postgres or SQLite?" || pv[0].CLI != agentside.CLI || pv[0].Owner != "ana" {
		t.Fatalf("the prompt as a person sees it: %+v", pv[0])
	}
	if _, err := st.DecidePrompt(ctx, store.PromptDecision{ID: pv[0].ID, Action: store.ActionRefine, Instruction: "SQLite, embedded", By: "ana", Surface: store.SurfaceTerminal}); err != nil {
		t.Fatal(err)
	}
	if a := <-done; a.Status != store.PromptRefined || a.Instruction != "SQLite, embedded" || a.DecidedBy != "ana" {
		t.Fatalf("forward_prompt: %+v", a)
	}
	// error_recovery that nobody answers: expired, never continued.
	var a agentside.Answer
	if res := agentCall(t, cs, "forward_prompt", map[string]any{"kind": "error_recovery", "text": "the build fails", "timeout": "1s"}, &a); res.IsError || a.Status != store.PromptExpired {
		t.Fatalf("error_recovery timeout: %+v %s", a, text(res))
	}

	// wait_for_instruction returns the operator's next message.
	ses := agentSession(t, st, "prompter")
	got := make(chan agentside.Instruction, 1)
	go func() {
		var in agentside.Instruction
		agentCall(t, cs, "wait_for_instruction", map[string]any{"timeout": "30s"}, &in)
		got <- in
	}()
	if _, err := st.Steer(ctx, ses.ID, "now write the migration", "ana", store.SurfaceTerminal); err != nil {
		t.Fatal(err)
	}
	if in := <-got; in.Status != "message" || in.Message == nil || in.Message.Text != "now write the migration" {
		t.Fatalf("wait_for_instruction: %+v", in)
	}
	var none agentside.Instruction
	if agentCall(t, cs, "wait_for_instruction", map[string]any{"timeout": "200ms"}, &none); none.Status != "timeout" {
		t.Fatalf("no message: %+v", none)
	}

	// heartbeat: progress in, queued messages out (once).
	st.Steer(ctx, ses.ID, "also add an index", "ana", store.SurfaceTerminal)
	st.Steer(ctx, ses.ID, "and a test", "ana", store.SurfaceTerminal)
	var b agentside.Beat
	agentCall(t, cs, "heartbeat", map[string]any{"progress": "schema written, 2 of 5 tables", "tool": "go test"}, &b)
	if len(b.Messages) != 2 || b.Messages[0].Text != "also add an index" || b.Messages[1].Text != "and a test" {
		t.Fatalf("heartbeat: %+v", b)
	}
	if cur, _ := st.Session(ctx, ses.ID); cur.Progress != "schema written, 2 of 5 tables" || cur.LastTool != "go test" {
		t.Fatalf("progress not stored: %+v", cur)
	}
	if agentCall(t, cs, "heartbeat", map[string]any{"progress": "3 of 5"}, &b); len(b.Messages) != 0 {
		t.Fatalf("messages delivered twice: %+v", b)
	}

	// remote_log and set_operational_mode.
	agentCall(t, cs, "remote_log", map[string]any{"level": "warning", "message": "flaky test skipped"}, nil)
	events, _ := st.Audit(ctx, ses.ID)
	if !slices.ContainsFunc(events, func(e store.Event) bool {
		return e.Action == "agent_log" && e.Actor == "agent:prompter" && strings.Contains(string(e.Detail), "flaky test skipped")
	}) {
		t.Fatalf("remote_log not in the audit log: %+v", events)
	}
	var s2 store.Session
	if res := agentCall(t, cs, "set_operational_mode", map[string]any{"mode": "remote"}, &s2); res.IsError || s2.Mode != store.ModeRemote {
		t.Fatalf("set_operational_mode: %+v %s", s2, text(res))
	}
	if res := agentCall(t, cs, "set_operational_mode", map[string]any{"mode": "everywhere"}, nil); !res.IsError {
		t.Fatal("an unknown mode was accepted")
	}
}

// After a restart a client finds its previous session's approved edit and
// queued messages, and applies the edit.
func TestRecoverState(t *testing.T) {
	ws := newWorkspace(t, 0)
	srv := agentServer(t, ws)
	st := openStore(t, ws)
	ctx := context.Background()
	file := filepath.Join(ws.Root, "README.txt")
	writeFile(t, file, "hello\n")
	first := agentConnect(t, srv, "restarting-client", nil)
	done := askAsync(t, first, map[string]any{"title": "Greet", "file": "README.txt", "diff": diffOf(t, "README.txt", "hello\n", "hello, world\n")})
	p := pendingRequest(t, ws)
	if _, err := st.Decide(ctx, store.Decision{RequestID: p.ID, Approve: true, By: "ana", Surface: store.SurfaceWeb}); err != nil {
		t.Fatal(err)
	}
	<-done
	if _, err := st.Steer(ctx, p.SessionID, "then stop", "ana", store.SurfaceTerminal); err != nil {
		t.Fatal(err)
	}
	first.Close()
	waitUntil(t, st, "the first session ends", func() bool { s, _ := st.Session(ctx, p.SessionID); return s.Ended() })

	second := agentConnect(t, srv, "restarting-client", nil)
	var state agentside.State
	if res := agentCall(t, second, "recover_state", nil, &state); res.IsError {
		t.Fatal(text(res))
	}
	if state.Previous == nil || state.Previous.ID != p.SessionID || state.Session.ID == p.SessionID || state.MovedSteering != 1 ||
		len(state.Requests) != 1 || state.Requests[0].ID != p.ID || state.Requests[0].Status != store.StatusApproved {
		t.Fatalf("recover_state: %+v", state)
	}
	var acc agentside.Accepted
	if res := agentCall(t, second, "accept_diff", map[string]any{"request_id": p.ID}, &acc); res.IsError || readFile(t, file) != "hello, world\n" {
		t.Fatalf("accept_diff after recovery: %+v %s", acc, text(res))
	}
	var b agentside.Beat
	if agentCall(t, second, "heartbeat", map[string]any{"progress": "back"}, &b); len(b.Messages) != 1 || b.Messages[0].Text != "then stop" {
		t.Fatalf("the moved message: %+v", b)
	}
}

func TestCheckAutoApproveAndPolicyTimeout(t *testing.T) {
	ws := newWorkspace(t, 0)
	writeFile(t, filepath.Join(ws.Root, ".agent", "policy.yaml"), "auto_approve:\n  write: [\"docs/**\"]\ntimeouts:\n  approval: 1s\n")
	// The user's allowlist bounds the workspace's write patterns too.
	cfg := t.TempDir()
	t.Setenv("AGENTINFRA_CONFIG_DIR", cfg)
	writeFile(t, filepath.Join(cfg, "allowlist.yaml"), "write: [\"**\"]\n")
	cs := agentConnect(t, agentServer(t, ws), "checker", nil)
	for _, c := range []struct {
		args map[string]any
		auto bool
		risk string
	}{
		{map[string]any{"kind": "edit", "file": "docs/guide.md"}, true, "low"},
		{map[string]any{"kind": "edit", "file": "main.go"}, false, "low"},
		{map[string]any{"kind": "command", "command": "rm -rf /"}, false, "critical"},
	} {
		var v agentside.AutoApprove
		if res := agentCall(t, cs, "check_auto_approve", c.args, &v); res.IsError || v.Auto != c.auto || v.Risk != c.risk || v.Rule == "" {
			t.Errorf("check_auto_approve %v: %+v %s", c.args, v, text(res))
		}
	}
	if res := agentCall(t, cs, "check_auto_approve", map[string]any{"kind": "edit"}, nil); !res.IsError || !strings.Contains(text(res), "file") {
		t.Errorf("an edit without a file: %s", text(res))
	}
	// The policy's approval timeout applies to ask_approval.
	var v agentside.Verdict
	if res := agentCall(t, cs, "ask_approval", map[string]any{"title": "Nobody answers"}, &v); res.IsError || v.Status != agentside.VerdictTimeout {
		t.Fatalf("policy timeout: %+v %s", v, text(res))
	}
}

// accept_diff applies only the edits of this person's MCP clients, and a
// diff that does not fit the file is refused when asked.
func TestAcceptDiffRefusals(t *testing.T) {
	ws := newWorkspace(t, 0)
	cs := agentConnect(t, agentServer(t, ws), "careful", nil)
	st := openStore(t, ws)
	ctx := context.Background()
	writeFile(t, filepath.Join(ws.Root, "a.txt"), "one\ntwo\n")
	ses, _ := st.CreateSession(ctx, store.NewSession{Owner: "ana", Workspace: ws.Root, CLI: "claude"})
	st.SetSessionStatus(ctx, ses.ID, store.Transition{To: store.SessionActive, By: "ana"})
	r, _ := st.RaiseRequest(ctx, store.NewRequest{SessionID: ses.ID, Kind: store.KindEdit, Tool: "Edit", File: "a.txt", Diff: diffOf(t, "a.txt", "one\ntwo\n", "one\n"), FileHash: "x"})
	st.Decide(ctx, store.Decision{RequestID: r.ID, Approve: true, By: "ana", Surface: store.SurfaceTerminal})
	if res := agentCall(t, cs, "accept_diff", map[string]any{"request_id": r.ID}, nil); !res.IsError || !strings.Contains(text(res), "MCP clients") {
		t.Fatalf("accept_diff of a claude run's request: %s", text(res))
	}
	if b, _ := os.ReadFile(filepath.Join(ws.Root, "a.txt")); string(b) != "one\ntwo\n" {
		t.Fatalf("the file changed: %q", b)
	}
	res := agentCall(t, cs, "ask_approval", map[string]any{"title": "x", "file": "a.txt", "diff": diffOf(t, "a.txt", "uno\ntwo\n", "one\n")}, nil)
	if !res.IsError || !strings.Contains(text(res), "does not apply") {
		t.Fatalf("a diff of other content: %s", text(res))
	}
	if p, _ := st.Pending(ctx); len(p) != 0 {
		t.Fatalf("a refused ask raised a request: %+v", p)
	}
}

// Over streamable HTTP a long ask_approval keeps reporting progress on its
// request's stream, comes back with the decision, and the client's session
// ends when the client closes its HTTP session.
func TestAskApprovalOverHTTP(t *testing.T) {
	ws := newWorkspace(t, 0)
	srv := agentServer(t, ws)
	hs := httptest.NewServer(srv.HTTPHandler("s3cret"))
	defer hs.Close()
	progress := make(chan *mcp.ProgressNotificationParams, 64)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "http-client", Version: "0"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			select {
			case progress <- r.Params:
			default:
			}
		}}).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: hs.URL + MCPPath, HTTPClient: &http.Client{Transport: authTransport{"s3cret"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := openStore(t, ws)
	params := &mcp.CallToolParams{Name: "ask_approval", Arguments: map[string]any{"title": "Run the migration"}}
	params.SetProgressToken(7)
	type result struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		res, err := cs.CallTool(ctx, params)
		done <- result{res, err}
	}()
	for i := 0; i < 3; i++ {
		select {
		case p := <-progress:
			if p.Message == "" {
				t.Fatalf("progress without a message: %+v", p)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%d progress notifications over HTTP", i)
		}
	}
	p := pendingRequest(t, ws)
	if _, err := st.Decide(context.Background(), store.Decision{RequestID: p.ID, Approve: true, By: "ana", Surface: store.SurfaceSlack}); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || r.res.IsError || !strings.Contains(text(r.res), "approved by @ana via slack") {
		t.Fatalf("ask_approval over HTTP: %v %s", r.err, textOf(r.res))
	}
	cs.Close()
	waitUntil(t, st, "the HTTP client's session ends", func() bool { s, _ := st.Session(context.Background(), p.SessionID); return s.Ended() })
}
