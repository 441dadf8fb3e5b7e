package codex

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
)

// hookKey is how codex names the first PreToolUse hook given with -c (its
// "session flags" layer) in hooks/list and in hooks.state.
const hookKey = "/<session-flags>/config.toml:pre_tool_use:0:0"

// hookTimeout is the hook's timeout in seconds: a year. A hook that times
// out fails open, and the hook waits for a person (agentinfra's own
// approval timeout, an hour by default, answers long before).
const hookTimeout = 365 * 24 * 3600

// commandLine is the codex app-server command line of a supervised run in
// dir, whose PreToolUse hook runs exe:
//
//   - -c projects={"<dir>"={trust_level="untrusted"}}: the worktree is never
//     trusted, so its own .codex/ (rules, config, MCP servers) is not
//     loaded, and thread/start does not write trust for it into the user's
//     config.toml (only the inline-table form does this; a dotted key
//     leaves the rules applying);
//   - agentinfra's PreToolUse hook and its trust (hookFlags);
//   - the model and the system prompt (developer_instructions).
func commandLine(bin, exe, dir, model, systemPrompt string, extra []string) []string {
	argv := []string{bin, "app-server"}
	if model != "" {
		argv = append(argv, "-c", "model="+tomlString(model))
	}
	if systemPrompt != "" {
		argv = append(argv, "-c", "developer_instructions="+tomlString(systemPrompt))
	}
	argv = append(argv, "-c", fmt.Sprintf("projects={%s={trust_level=\"untrusted\"}}", tomlString(dir)))
	argv = append(argv, hookFlags(exe)...)
	return append(argv, extra...)
}

// hookFlags install agentinfra's PreToolUse hook for every tool ("*")
// and trust it (hooks.state, the hash codex computes of it: hookHash), so
// that nothing is written to the user's config.toml.
func hookFlags(exe string) []string {
	cmd := shellQuote(exe) + " " + HookArg
	return []string{
		"-c", fmt.Sprintf("hooks.PreToolUse=[{matcher=\"*\",hooks=[{type=\"command\",command=%s,timeout=%d}]}]", tomlString(cmd), hookTimeout),
		"-c", fmt.Sprintf("hooks.state={%s={trusted_hash=%s}}", tomlString(hookKey), tomlString(hookHash(cmd, hookTimeout))),
	}
}

// hookHash is codex's trust hash of the hook (hooks/list's currentHash):
// the SHA-256 of its normalized identity — event, matcher and the one
// command handler, with its timeout and async — as JSON with sorted keys
// and no spaces (codex-rs/hooks discovery.rs, command_hook_hash). The
// bridge checks with hooks/list that codex agrees before it goes on.
func hookHash(cmd string, timeout int) string {
	id := map[string]any{
		"event_name": "pre_tool_use",
		"matcher":    "*",
		"hooks":      []any{map[string]any{"type": "command", "command": cmd, "timeout": timeout, "async": false}},
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // serde_json does not escape <, >, &
	enc.Encode(id)           // maps encode with sorted keys
	sum := sha256.Sum256(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// shellQuote is s as one word of sh (codex runs a hook command with sh -c).
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+=:,@", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
