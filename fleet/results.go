package fleet

import "fmt"

// The results below are what both adapters print: the MCP tools return them
// as structured content, and the CLI's --json prints the same objects.

// AgentResult is the result of create_agent and show_agent.
type AgentResult struct {
	Agent   Agent  `json:"agent"`
	Message string `json:"message"`
	// Warnings are the agent's (Agent.Warnings).
	Warnings []string `json:"warnings,omitempty"`
}

// ListResult is the result of list_agents.
type ListResult struct {
	Agents     []AgentSummary `json:"agents"`
	TotalCount int            `json:"total_count"`
	// Warnings are the listed agents' (Agent.Warnings), in order.
	Warnings []string `json:"warnings,omitempty"`
}

// TaskResult is the result of start_agent_task and stop_agent_task.
type TaskResult struct {
	Task        TaskRun `json:"task"`
	AgentStatus Status  `json:"agent_status"`
	Message     string  `json:"message"`
	// Warnings say what the call found and dealt with (a leftover of a
	// killed command it rolled back or finished).
	Warnings []string `json:"warnings,omitempty"`
}

// DeletedAgent names what delete_agent removed.
type DeletedAgent struct {
	Name        string `json:"name"`
	WorkspaceID string `json:"workspace_id"`
	Branch      string `json:"branch"`
	ArchivedTo  string `json:"archived_to"`
	// ArchivedBranch is the name the agent's branch is kept under (""
	// when it had none: Coder).
	ArchivedBranch string `json:"archived_branch"`
}

// DeleteAgentResult is the result of delete_agent.
type DeleteAgentResult struct {
	Message      string       `json:"message"`
	DeletedAgent DeletedAgent `json:"deleted_agent"`
	// Warnings say what the call found and dealt with (a leftover of a
	// killed command it rolled back or finished).
	Warnings []string `json:"warnings,omitempty"`
}

// RolesResult is the result of list_agent_roles.
type RolesResult struct {
	Roles []Role `json:"roles"`
}

// ProjectsResult is the result of list_agent_projects.
type ProjectsResult struct {
	Projects []Project `json:"projects"`
}

// NewListResult builds list_agents' result.
func NewListResult(agents []Agent) ListResult {
	out := ListResult{Agents: make([]AgentSummary, 0, len(agents)), TotalCount: len(agents)}
	for _, a := range agents {
		out.Agents = append(out.Agents, a.Summary())
		out.Warnings = append(out.Warnings, a.Warnings...)
	}
	return out
}

// NewCreateResult builds create_agent's result.
func NewCreateResult(a Agent) AgentResult {
	if a.Workspace.Branch == "" { // a remote workspace (Coder)
		return AgentResult{Agent: a, Warnings: a.Warnings, Message: fmt.Sprintf("agent %s created as workspace %s; it is %s on its spec", a.Name, a.Workspace.Path, a.Status)}
	}
	return AgentResult{Agent: a, Warnings: a.Warnings, Message: fmt.Sprintf("agent %s created in %s (branch %s); it is %s on its spec", a.Name, a.Workspace.Path, a.Workspace.Branch, a.Status)}
}

// NewShowResult builds show_agent's result.
func NewShowResult(a Agent) AgentResult {
	msg := fmt.Sprintf("agent %s is %s", a.Name, a.Status)
	if a.CurrentRun != nil {
		msg += " with run " + a.CurrentRun.ID + ": " + a.CurrentRun.Summary
	}
	return AgentResult{Agent: a, Message: msg, Warnings: a.Warnings}
}

// NewStartResult builds start_agent_task's result.
func NewStartResult(name string, r StartResult) TaskResult {
	msg := fmt.Sprintf("agent %s started run %s: %s", name, r.Task.ID, r.Task.Summary)
	switch {
	case r.Task.CompletedAt != nil:
		msg += fmt.Sprintf("; the run is %s already (%s)", r.Task.Status, r.Task.ExitReason)
	case r.AgentStatus != StatusBusy || r.Task.Status != RunRunning:
		msg += fmt.Sprintf("; it is still starting (run %s, agent %s): show_agent / agent show %s tells when it runs", r.Task.Status, r.AgentStatus, name)
	}
	return TaskResult{Task: r.Task.Normalized(), AgentStatus: r.AgentStatus, Message: msg}
}

// NewStopResult builds stop_agent_task's result.
func NewStopResult(name string, tr TaskRun, st Status) TaskResult {
	return TaskResult{Task: tr.Normalized(), AgentStatus: st, Message: fmt.Sprintf("run %s of agent %s is %s; the agent is %s", tr.ID, name, tr.Status, st)}
}

// NewDeleteResult builds delete_agent's result.
func NewDeleteResult(d DeleteResult) DeleteAgentResult {
	if d.Branch == "" && d.WorkspaceID == "" { // a record that could not be read (delete --force)
		return DeleteAgentResult{Message: fmt.Sprintf("agent %s deleted: its record could not be read; its folder is archived in %s", d.Name, d.ArchivedTo),
			DeletedAgent: DeletedAgent(d)}
	}
	if d.Branch == "" { // a remote workspace (Coder)
		msg := fmt.Sprintf("agent %s deleted: its workspace %s is being destroyed", d.Name, d.WorkspaceID)
		if d.ArchivedTo != "" {
			msg += "; history archived in " + d.ArchivedTo
		}
		return DeleteAgentResult{Message: msg, DeletedAgent: DeletedAgent(d)}
	}
	kept := "branch " + d.Branch + " kept as " + d.ArchivedBranch
	if d.ArchivedBranch == "" {
		kept = "its branch " + d.Branch + " was gone already"
	}
	return DeleteAgentResult{
		Message: fmt.Sprintf("agent %s deleted: worktree %s removed, %s, history archived in %s; the name %s is free again",
			d.Name, d.WorkspaceID, kept, d.ArchivedTo, d.Name),
		DeletedAgent: DeletedAgent(d),
	}
}
