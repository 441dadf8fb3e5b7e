package gemini

import "path/filepath"

// AskAllTOML is the policy a supervised gemini gets as --admin-policy:
// every tool asks (session/request_permission), and the bridge answers by
// the workspace policy — a call it allows is allowed at once. The shell
// rule has an argsPattern because gemini turns a matched ask_user rule
// without one into allow for the commands it deems safe (cat, ls, pwd, git
// status … — `cat .env` among them), even from the admin tier; a rule with
// an argsPattern skips that heuristic (verified with gemini 0.61.0, issue
// 27). The admin tier sits above the user's and the workspace's policies,
// where an allow rule at the same priority would tie. No allow rules: what
// agentinfra auto-approves, its bridge answers (allow_once), never gemini.
const AskAllTOML = `# agentinfra: every tool call asks; agentinfra's bridge answers.
[[rule]]
toolName = "*"
decision = "ask_user"
priority = 998

# An argsPattern keeps gemini's "known safe command" shortcut from turning
# this ask into allow.
[[rule]]
toolName = "run_shell_command"
argsPattern = "[\\s\\S]*"
decision = "ask_user"
priority = 999
`

// SystemPolicies is the folder whose .toml files, when there are any, make
// gemini ignore --admin-policy (gemini's documentation: supplemental admin
// policies give way to the system administrator's).
const SystemPolicies = "/etc/gemini-cli/policies"

// policyFlag is how AskAllTOML is passed: --admin-policy, or --policy (the
// user's tier, where an allow rule of the same priority may tie with it)
// with a warning when the machine's own admin policies would make gemini
// ignore --admin-policy.
func policyFlag(systemDir string) (flag, warning string) {
	if m, _ := filepath.Glob(filepath.Join(systemDir, "*.toml")); len(m) > 0 {
		return "--policy", "gemini ignores --admin-policy on this machine (" + systemDir + " holds policies): agentinfra's ask-everything policy is passed with --policy, the user's tier, where a user policy allowing a tool at priority 999 could tie with it"
	}
	return "--admin-policy", ""
}
