package fleet

import tasksvc "github.com/agentinfra/agentinfra/task"

// CreateInput is what create_agent and `agent create` take.
type CreateInput struct {
	Name    string
	Project string // "" = the workspace's own repository
	Role    string // "" = the configured default (coder)
	Spec    string
	CLI     string // "" = the configured default
	Source  string // who asks (human, agent, ai_controller); "" = human
	// ApprovalMode is the agent's runs' ("" = the fleet config's
	// approval_mode; ask: supervised, see docs/supervision.md).
	ApprovalMode string
	// Owner is the person the supervised runs belong to ("" = $AGENTINFRA_USER
	// or the login name).
	Owner string
}

// DeleteResult is what delete_agent returns.
type DeleteResult struct {
	Name        string `json:"name"`
	WorkspaceID string `json:"workspace_id"`
	Branch      string `json:"branch"`
	ArchivedTo  string `json:"archived_to"`
	// ArchivedBranch is the name Branch is kept under ("" when there was
	// none to keep, and on Coder): the agent's name is free again.
	ArchivedBranch string `json:"archived_branch"`
}

// ListFilter narrows List; empty fields match everything.
type ListFilter struct {
	Status  string
	Project string
}

// StartInput is a task for an agent: free text, a matrix task ID, or Next
// (the highest-priority ready task). Exactly one of them.
type StartInput struct {
	Name   string
	Text   string
	TaskID string
	Next   bool
	// Note is added to a matrix task's prompt (a word from who gives it).
	Note   string
	Source string // "" = human
	// ApprovalMode is this run's ("" = the agent's, else the fleet
	// config's); ask: supervised.
	ApprovalMode string
	// Owner is the person a supervised run belongs to ("" =
	// $AGENTINFRA_USER or the login name).
	Owner string
	// Prompt, with TaskID, is the run's prompt instead of the task's
	// assembled one: a change sent back to its agent (review.Prompt). The
	// run continues the agent CLI's session; an agent without one gets the
	// task's prompt first, then this one.
	Prompt string
	// ReviewOf, with Text, names the matrix task whose change this run
	// reviews (review.reviewer's runs): the verdict of its final message
	// is recorded when it ends.
	ReviewOf string
}

// EnvAgent names the agent in the environment of its runs, so that an
// agentinfra command the agent runs knows who asks (source "agent").
const EnvAgent = tasksvc.EnvAgent

// StartResult is what start_agent_task returns.
type StartResult struct {
	Task        TaskRun `json:"task"`
	AgentStatus Status  `json:"agent_status"`
}
