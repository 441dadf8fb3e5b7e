// Package gemini is everything agentinfra knows of the gemini CLI
// (@google/gemini-cli):
//
//   - headless: Runner builds its command line (gemini -o stream-json) and
//     parses what it prints into runner events and a result (package runner
//     starts it); CheckPromptSize refuses a prompt it would cut short;
//   - supervised: StartBridge speaks ACP (gemini --acp) through the ACP Go
//     SDK, each permission request going to the bridge's gate (package
//     bridge: the policy, else a person);
//   - native rules: PolicyTOML turns what the workspace policy approves into
//     a --policy file of gemini's own rules, so that it does not ask.
//
// Package agentcli picks it by name.
package gemini
