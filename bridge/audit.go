package bridge

// The audit log's actions of a supervised run's tool calls (issue 27, item
// 9): first what was decided — policy_allowed when the policy (or
// agentinfra's own rule for a CLI's bookkeeping) let the call go ahead, or
// the request a person decided — then, once the CLI reports it, what the
// CLI did with that same call (its native ID in the detail): it ran it,
// refused it, or ran it and it failed. A call the CLI ran without asking
// is ran_unasked, with a warning on the run's events. A person's approval
// for the session passed on to the CLI's own mechanism is
// session_approval_to_cli (SessionToCLI).
const (
	AuditPolicyAllowed = "policy_allowed"
	AuditRan           = "tool_ran"
	AuditRefused       = "tool_refused"
	AuditFailed        = "tool_failed"
	AuditRanUnasked    = "ran_unasked"
	AuditSessionToCLI  = "session_approval_to_cli"
)
