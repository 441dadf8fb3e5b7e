package codex

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"

	"github.com/agentinfra/agentinfra/bridge"
)

// codex's own rules — the user's $CODEX_HOME/rules (what codex's "always
// allow" writes), a readOnlyHint MCP tool, view_image — run a tool call
// without any request to the client. Its PreToolUse hook fires before every
// one of them, and a hook's deny blocks even a rule-allowed call; a hook
// cannot make codex ask, though (permissionDecision ask or allow is
// "unsupported"), and a hook that times out or crashes fails open (issue
// 27, verified with codex 0.169.0). So agentinfra installs its own
// PreToolUse hook on every supervised codex (hookFlags): the hook — this
// program, run again by codex with HookArg — hands the call to the bridge
// over a socket, the bridge decides it through the gate (the policy, else a
// person; the hook waits), and the hook blocks the call with the reason, or
// stays silent to let it go. codex then still sends its own
// requestApproval for a call it would ask about, which the bridge accepts
// at once when the hook allowed that same call. Every failure of the hook
// itself is exit 2, which blocks.

// HookArg, as the first argument, makes a program that links this package
// act as codex's PreToolUse hook instead of itself (init below): the
// agentinfra binary, and the test binaries of the packages that run codex.
const HookArg = "__agentinfra-codex-pretool-hook"

// EnvHookSocket names the socket the hook asks the bridge on; codex passes
// its environment on to the hook.
const EnvHookSocket = "AGENTINFRA_CODEX_HOOK"

// maxHookInput bounds what the hook reads of codex and the bridge of the
// hook (a patch is the largest input).
const maxHookInput = 64 << 20

func init() {
	if len(os.Args) > 1 && os.Args[1] == HookArg {
		os.Exit(hookMain(os.Stdin, os.Stdout, os.Stderr, os.Getenv(EnvHookSocket)))
	}
}

// hookQuery is what codex gives a PreToolUse hook (stdin), of which the
// bridge needs the call.
type hookQuery struct {
	ToolName  string          `json:"tool_name"`
	ToolInput json.RawMessage `json:"tool_input"`
	ToolUseID string          `json:"tool_use_id"`
}

// hookVerdict is the bridge's answer to the hook.
type hookVerdict struct {
	Allow  bool   `json:"allow"`
	Reason string `json:"reason,omitempty"`
}

// hookMain is the hook: codex's JSON in, one line to the bridge, its
// verdict back; a deny is printed the way codex reads it, an allow prints
// nothing. Exit 2 (codex blocks the call, with stderr as the reason) on
// anything that goes wrong.
func hookMain(stdin io.Reader, stdout, stderr io.Writer, socket string) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "agentinfra's hook: "+format+"; the call is blocked\n", a...)
		return 2
	}
	in, err := io.ReadAll(io.LimitReader(stdin, maxHookInput+1))
	if err != nil || len(in) > maxHookInput {
		return fail("cannot read codex's input (%v, %d bytes)", err, len(in))
	}
	var line bytes.Buffer
	if err := json.Compact(&line, in); err != nil {
		return fail("codex's input is not JSON: %v", err)
	}
	if socket == "" {
		return fail("$%s is not set: this is not a supervised run", EnvHookSocket)
	}
	conn, err := net.Dial("unix", socket)
	if err != nil {
		return fail("cannot reach agentinfra: %v", err)
	}
	defer conn.Close()
	if _, err := conn.Write(append(line.Bytes(), '\n')); err != nil {
		return fail("cannot ask agentinfra: %v", err)
	}
	var v hookVerdict
	if err := json.NewDecoder(conn).Decode(&v); err != nil {
		return fail("no answer from agentinfra: %v", err)
	}
	if v.Allow {
		return 0
	}
	out, _ := json.Marshal(map[string]any{"hookSpecificOutput": map[string]any{
		"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": v.Reason}})
	fmt.Fprintln(stdout, string(out))
	return 0
}

// hookListener is the socket the hooks of one run ask on: an abstract one
// on Linux (no file an agent could replace; Landlock here scopes signals,
// not abstract sockets), else one in the run's own folder.
func hookListener(files *bridge.Files) (net.Listener, error) {
	addr := filepath.Join(files.Dir, "hook.sock")
	if runtime.GOOS == "linux" {
		var b [16]byte
		rand.Read(b[:])
		addr = "@agentinfra-codex-hook-" + hex.EncodeToString(b[:])
	}
	ln, err := net.Listen("unix", addr)
	if err != nil {
		return nil, fmt.Errorf("listen for codex's hook: %w", err)
	}
	return ln, nil
}

// serveHooks answers the hooks of the run until ln is closed.
func (b *codexBridge) serveHooks(ln net.Listener) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		go b.hook(conn)
	}
}

// hook decides one call a hook asks about. The request is withdrawn when
// the hook goes away (codex interrupted the turn, or killed the hook).
func (b *codexBridge) hook(conn net.Conn) {
	defer conn.Close()
	r := bufio.NewReaderSize(conn, 64<<10)
	line, err := readLine(r, maxHookInput)
	if err != nil {
		return // the hook exits 2 on the closed connection: blocked
	}
	var q hookQuery
	if json.Unmarshal(line, &q) != nil {
		json.NewEncoder(conn).Encode(hookVerdict{Reason: "agentinfra could not read the call"})
		return
	}
	a := hookAsk(b.g.Root(), q)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		r.ReadByte() // returns when the hook is gone
		cancel()
	}()
	b.mu.Lock()
	b.hooked[a.NativeID] = a
	b.mu.Unlock()
	ans := b.g.Decide(ctx, a)
	if ctx.Err() != nil {
		return
	}
	if ans.Allow {
		b.mu.Lock()
		b.hookAllowed[a.NativeID] = a
		if ans.ForSession() {
			b.hookSession[a.NativeID] = ans.Request
		}
		b.mu.Unlock()
	}
	json.NewEncoder(conn).Encode(hookVerdict{Allow: ans.Allow, Reason: ans.Message})
}

// readLine reads one line of at most max bytes, without its newline.
func readLine(r *bufio.Reader, max int) ([]byte, error) {
	var out []byte
	for {
		part, isPrefix, err := r.ReadLine()
		if err != nil {
			return nil, err
		}
		out = append(out, part...)
		if len(out) > max {
			return nil, fmt.Errorf("a line over %d bytes", max)
		}
		if !isPrefix {
			return out, nil
		}
	}
}

// checkHook makes sure codex runs agentinfra's hook: hooks/list must show
// it trusted and enabled for dir (a codex that computes its trust hash
// otherwise, or a managed setting that allows only managed hooks, would
// silently skip it — and with it every call its rules allow).
func (b *codexBridge) checkHook(ctx context.Context, dir string) error {
	r, err := b.call(ctx, "hooks/list", map[string]any{"cwds": []string{dir}})
	if err != nil {
		return fmt.Errorf("list codex's hooks (codex 0.169 or later runs agentinfra's hook): %w", err)
	}
	var l struct {
		Data []struct {
			Hooks []struct {
				Key         string `json:"key"`
				TrustStatus string `json:"trustStatus"`
				Enabled     bool   `json:"enabled"`
				CurrentHash string `json:"currentHash"`
			} `json:"hooks"`
		} `json:"data"`
	}
	json.Unmarshal(r, &l)
	for _, d := range l.Data {
		for _, h := range d.Hooks {
			if h.Key != hookKey {
				continue
			}
			if h.TrustStatus != "trusted" || !h.Enabled {
				return fmt.Errorf("codex does not run agentinfra's PreToolUse hook (trust %s, enabled %v, its hash %s): every tool call must pass agentinfra, so the run cannot start", h.TrustStatus, h.Enabled, h.CurrentHash)
			}
			return nil
		}
	}
	return fmt.Errorf("codex does not list agentinfra's PreToolUse hook (%s): every tool call must pass agentinfra, so the run cannot start", hookKey)
}

// userMCPServers is the thread's config that turns off every MCP server
// of the user's (and the system's) config.toml — codex starts them at
// thread/start, running their code, and runs a server's readOnlyHint tools
// without asking: the supervised run gets only the MCP servers given on
// its command line (-c, the session flags layer), as claude's
// --strict-mcp-config does. config/read's layers give their names.
func (b *codexBridge) userMCPServers(ctx context.Context, dir string) (map[string]any, error) {
	r, err := b.call(ctx, "config/read", map[string]any{"cwd": dir, "includeLayers": true})
	if err != nil {
		return nil, fmt.Errorf("read codex's config: %w", err)
	}
	var c struct {
		Layers []struct {
			Name struct {
				Type string `json:"type"`
			} `json:"name"`
			Config struct {
				MCPServers map[string]json.RawMessage `json:"mcp_servers"`
			} `json:"config"`
		} `json:"layers"`
	}
	json.Unmarshal(r, &c)
	off := map[string]any{}
	for _, l := range c.Layers {
		if l.Name.Type == "sessionFlags" {
			continue
		}
		for name := range l.Config.MCPServers {
			off[name] = map[string]any{"enabled": false}
		}
	}
	if len(off) == 0 {
		return map[string]any{}, nil
	}
	return map[string]any{"mcp_servers": off}, nil
}
