package fleet

import (
	"sort"
	"time"

	"github.com/agentinfra/agentinfra/fleet/metadata"
	"github.com/agentinfra/agentinfra/internal/waiting"
)

// Status is an agent's derived status.
type Status string

// Agent statuses. Locally an agent goes pending → starting → busy ⇄ idle, and
// deleting when removed; stopping is a stop in progress. waiting is busy
// with a supervised run that waits for a person (Agent.Waiting says for
// what): busy again once answered. stopped, canceling
// and canceled are the states of a remote backend's workspace (Coder) and
// are never derived by the local backend; failed is a creation that did not
// finish.
const (
	StatusPending   Status = "pending"
	StatusStarting  Status = "starting"
	StatusBusy      Status = "busy"
	StatusWaiting   Status = "waiting"
	StatusIdle      Status = "idle"
	StatusStopping  Status = "stopping"
	StatusStopped   Status = "stopped"
	StatusFailed    Status = "failed"
	StatusCanceling Status = "canceling"
	StatusCanceled  Status = "canceled"
	StatusDeleting  Status = "deleting"
	StatusDeleted   Status = "deleted"
)

// Statuses lists every status, in lifecycle order.
var Statuses = []Status{StatusPending, StatusStarting, StatusBusy, StatusWaiting, StatusIdle, StatusStopping, StatusStopped,
	StatusFailed, StatusCanceling, StatusCanceled, StatusDeleting, StatusDeleted}

// Run statuses.
const (
	RunPending   = "pending"
	RunRunning   = "running"
	RunCompleted = "completed"
	RunFailed    = "failed"
	RunStopped   = "stopped"
)

// Run sources: who asked for the run.
const (
	SourceAgent        = "agent"
	SourceHuman        = "human"
	SourceAIController = "ai_controller"
)

// Sources lists the accepted run sources.
var Sources = []string{SourceAgent, SourceHuman, SourceAIController}

// Agent is one named agent as the CLI and MCP show it.
type Agent struct {
	Name   string `json:"name"`
	Status Status `json:"status"`
	// CurrentTask is the current run's summary (null when idle): the fleet
	// design's string. CurrentRun is the run itself.
	CurrentTask *string  `json:"current_task"`
	CurrentRun  *TaskRun `json:"current_run"`
	// LastTask is the summary of the latest run that ended (null when none
	// has): the design's last_task.
	LastTask *string `json:"last_task"`
	// LastRun is the latest ended run (nil when none has), for pages that
	// show how it ended — a failed CLI's own words are in its ExitReason.
	// Not in the JSON: last_task is its summary, `agent history` the rest.
	LastRun   *TaskRun  `json:"-"`
	Role      string    `json:"role"`
	Project   string    `json:"project"`
	Spec      string    `json:"spec"`
	CLI       string    `json:"cli"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// WorkspaceID is Workspace.ID, flat as the fleet design has it.
	WorkspaceID string         `json:"workspace_id"`
	Workspace   Workspace      `json:"workspace"`
	Metadata    MetadataFields `json:"metadata"`
	// Error says why a failed agent failed ("" otherwise).
	Error string `json:"error,omitempty"`
	// Waiting is what the agent's supervised run waits for a person to
	// answer (status waiting; nil otherwise).
	Waiting *waiting.Item `json:"waiting,omitempty"`

	// MetadataCount is the number of fields in Metadata, the workspace
	// metadata from its Taskfile (docs/fleet.md): filled by WithMetadata,
	// else 0 and {}. MetadataError says why the Taskfile could not be read.
	MetadataCount int    `json:"metadata_count"`
	MetadataError string `json:"metadata_error,omitempty"`

	// Warnings say what the backend could not find out about the agent
	// (Coder would not list its role's presets, say); they never fail a
	// call. The results carry them as their own warnings (AgentResult,
	// ListResult), the CLI on stderr.
	Warnings []string `json:"-"`

	metadataNames     []string // the fields in Taskfile order
	metadataCollected bool
}

// MetadataFields are an agent's workspace metadata fields by name. In JSON
// a value that is a JSON number, boolean or null is given as one (see
// TypedValue).
type MetadataFields map[string]metadata.Field

// Workspace is where an agent works: a git worktree on its own branch.
type Workspace struct {
	// ID identifies the workspace for the backend (locally the worktree path).
	ID     string `json:"id"`
	Path   string `json:"path"`
	Branch string `json:"branch"`
}

// AgentSummary is one row of list_agents.
type AgentSummary struct {
	Name        string    `json:"name"`
	Status      Status    `json:"status"`
	CurrentTask *string   `json:"current_task"`
	CurrentRun  *TaskRun  `json:"current_run"`
	LastTask    *string   `json:"last_task"`
	Role        string    `json:"role"`
	Project     string    `json:"project"`
	CreatedAt   time.Time `json:"created_at"`
	WorkspaceID string    `json:"workspace_id"`
	// Waiting: see Agent.Waiting.
	Waiting *waiting.Item `json:"waiting,omitempty"`

	// MetadataCount (all fields) and Metadata (the include_in_list fields'
	// values) are left out when list_agents skips the metadata.
	MetadataCount *int         `json:"metadata_count,omitempty"`
	Metadata      ListMetadata `json:"metadata,omitzero"`
	MetadataError string       `json:"metadata_error,omitempty"`
}

// Summary returns the list_agents row of a.
func (a Agent) Summary() AgentSummary {
	s := AgentSummary{Name: a.Name, Status: a.Status, CurrentTask: a.CurrentTask, CurrentRun: a.CurrentRun, LastTask: a.LastTask,
		Role: a.Role, Project: a.Project, CreatedAt: a.CreatedAt, WorkspaceID: a.WorkspaceID, Waiting: a.Waiting}
	if a.metadataCollected {
		n := a.MetadataCount
		s.MetadataCount, s.MetadataError = &n, a.MetadataError
		s.Metadata = ListMetadata(metadata.Metadata{Fields: a.Metadata}.ListValues())
	}
	return s
}

// TaskRun is one task an agent was given: the history's unit.
type TaskRun struct {
	ID          string     `json:"id"`
	AgentName   string     `json:"agent_name"`
	Summary     string     `json:"summary"`
	Status      string     `json:"status"`
	Source      string     `json:"source"`
	CreatedAt   time.Time  `json:"created_at"`
	StartedAt   *time.Time `json:"started_at"`
	CompletedAt *time.Time `json:"completed_at"`
	// TaskID is the matrix task of the run ("" for free text).
	TaskID string `json:"task_id,omitempty"`
	// SessionID is the agent CLI's session (resumed by the next run).
	SessionID string `json:"session_id,omitempty"`
	// ExitReason says how the run ended ("" while it runs).
	ExitReason string `json:"exit_reason,omitempty"`
	// ExitCode is the agent CLI's exit code (nil while it runs or when it never ran).
	ExitCode *int `json:"exit_code,omitempty"`
}

// Role is an agent mode (.agent/agents/{name}.md) used as an agent's role.
type Role struct {
	Name        string `json:"name"`
	DisplayName string `json:"display_name"`
	Description string `json:"description"`
}

// Project is a repository agents work in.
type Project struct {
	Name        string `json:"name"`
	DisplayName string `json:"display_name"`
	Description string `json:"description"`
	// TemplateID and TemplateName are the Coder template of a coder project
	// ("" locally).
	TemplateID   string `json:"template_id"`
	TemplateName string `json:"template_name"`
	Path         string `json:"path"`
	BaseBranch   string `json:"base_branch"`
	Backend      string `json:"backend"`
}

// HistoryPage is one page of an agent's task runs, newest first.
type HistoryPage struct {
	Tasks      []TaskRun `json:"tasks"`
	TotalCount int       `json:"total_count"`
	Page       int       `json:"page"`
	PageSize   int       `json:"page_size"`
	TotalPages int       `json:"total_pages"`
	// Warnings say what the call found and dealt with (a leftover of a
	// killed command it rolled back or finished).
	Warnings []string `json:"warnings,omitempty"`
}

// History page limits.
const (
	DefaultPageSize = 20
	MaxPageSize     = 100
)

// SetMetadata fills the agent's metadata from a collection (any backend).
func (a *Agent) SetMetadata(md metadata.Metadata) {
	a.Metadata, a.MetadataCount, a.MetadataError = md.FieldsOrEmpty(), md.Count(), md.Err
	a.metadataNames, a.metadataCollected = md.Names, true
}

// MetadataNames lists the agent's metadata fields in Taskfile order.
func (a Agent) MetadataNames() []string {
	if len(a.metadataNames) == len(a.Metadata) {
		return a.metadataNames
	}
	names := make([]string, 0, len(a.Metadata))
	for n := range a.Metadata {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Running reports whether the status is an agent's run going on: busy, or
// waiting for a person.
func (s Status) Running() bool { return s == StatusBusy || s == StatusWaiting }
