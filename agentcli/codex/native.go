package codex

import "github.com/agentinfra/agentinfra/supervision/policy"

// ThreadSettings are codex app-server's thread settings of a supervised
// codex: approvalPolicy "untrusted" (everything codex does not know to be
// safe asks; the bridge then applies the policy), sandbox
// "danger-full-access" (what a person or the policy approved runs as
// asked; writes are judged by the write rules). The policy does not change
// them: codex has no rules agentinfra could give it.
func ThreadSettings(*policy.Policy) (approvalPolicy, sandbox string) {
	return "untrusted", "danger-full-access"
}
