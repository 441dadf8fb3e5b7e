// Package gemini is everything agentinfra knows of the gemini CLI
// (@google/gemini-cli):
//
//   - headless: Runner builds its command line (gemini -o stream-json) and
//     parses what it prints into runner events and a result (package runner
//     starts it); CheckPromptSize refuses a prompt it would cut short;
//   - supervised: StartBridge speaks ACP (gemini --acp) through the ACP Go
//     SDK, each permission request going to the bridge's gate (package
//     bridge: the policy, else a person);
//   - native rules: AskAllTOML, an admin policy that makes every tool call
//     ask, so that the bridge applies the workspace policy to each.
//
// Package agentcli picks it by name.
package gemini
