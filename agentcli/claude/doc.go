// Package claude is everything agentinfra knows of the claude CLI
// (@anthropic-ai/claude-code):
//
//   - headless: Runner builds its command line (claude -p --output-format
//     stream-json) and parses what it prints into runner events and a result
//     (package runner starts it);
//   - supervised: StartBridge speaks claude's stream-json control protocol
//     (--permission-prompt-tool stdio), each permission request going to the
//     bridge's gate (package bridge: the policy, else a person);
//   - native rules: Settings, an ask rule for every tool (--settings), so
//     that every tool call reaches the bridge, which applies the workspace
//     policy to each.
//
// Package agentcli picks it by name.
package claude
