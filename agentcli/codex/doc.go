// Package codex is everything agentinfra knows of the codex CLI
// (@openai/codex):
//
//   - headless: Runner builds its command line (codex exec --json) and
//     parses what it prints into runner events and a result (package runner
//     starts it);
//   - supervised: StartBridge speaks codex app-server's JSON-RPC, each
//     permission request going to the bridge's gate (package bridge: the
//     policy, else a person);
//   - native rules: ThreadSettings are the thread's approval policy and
//     sandbox (codex takes no rules of the workspace policy: the bridge sees
//     every request).
//
// Package agentcli picks it by name.
package codex
