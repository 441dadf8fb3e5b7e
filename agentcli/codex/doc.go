// Package codex is everything agentinfra knows of the codex CLI
// (@openai/codex):
//
//   - headless: Runner builds its command line (codex exec --json) and
//     parses what it prints into runner events and a result (package runner
//     starts it);
//   - supervised: StartBridge speaks codex app-server's JSON-RPC, each
//     tool call going to the bridge's gate (package bridge: the policy, else
//     a person) through agentinfra's PreToolUse hook (hook.go) and codex's
//     own permission requests; the worktree is never trusted (flags.go);
//   - native rules: ThreadSettings are the thread's approval policy and
//     sandbox (codex takes no rules of the workspace policy: the bridge sees
//     every call).
//
// Package agentcli picks it by name.
package codex
