package coder

import "time"

// The structs below decode Coder's responses. Field names are Coder's JSON
// names exactly; fields the fleet does not read are left out (unknown
// fields are ignored on decode).

// Organization is an entry of GET /api/v2/users/me/organizations.
type Organization struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	DisplayName string    `json:"display_name"`
	Description string    `json:"description"`
	IsDefault   bool      `json:"is_default"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// Template is an entry of GET /api/v2/templates: a fleet project.
type Template struct {
	ID               string    `json:"id"`
	CreatedAt        time.Time `json:"created_at"`
	UpdatedAt        time.Time `json:"updated_at"`
	OrganizationID   string    `json:"organization_id"`
	OrganizationName string    `json:"organization_name"`
	Name             string    `json:"name"`
	DisplayName      string    `json:"display_name"`
	Description      string    `json:"description"`
	Icon             string    `json:"icon"`
	ActiveVersionID  string    `json:"active_version_id"`
	Deprecated       bool      `json:"deprecated"`
}

// Preset is a template version's workspace preset: a fleet role. Coder
// answers presets with PascalCase field names, unlike everything else.
type Preset struct {
	ID          string            `json:"ID"`
	Name        string            `json:"Name"`
	Parameters  []PresetParameter `json:"Parameters"`
	Default     bool              `json:"Default"`
	Description string            `json:"Description"`
	Icon        string            `json:"Icon"`
	// DesiredPrebuildInstances is null when the preset has no prebuilds.
	DesiredPrebuildInstances *int `json:"DesiredPrebuildInstances"`
}

// PresetParameter is a parameter value a preset sets.
type PresetParameter struct {
	Name  string `json:"Name"`
	Value string `json:"Value"`
}

// TemplateVersionParameter is an entry of
// GET /api/v2/templateversions/{id}/rich-parameters.
type TemplateVersionParameter struct {
	Name         string `json:"name"`
	DisplayName  string `json:"display_name,omitempty"`
	Description  string `json:"description"`
	Type         string `json:"type"`
	FormType     string `json:"form_type"`
	Mutable      bool   `json:"mutable"`
	DefaultValue string `json:"default_value"`
	Required     bool   `json:"required"`
	Ephemeral    bool   `json:"ephemeral"`
}

// WorkspacesResponse is the answer of GET /api/v2/workspaces.
type WorkspacesResponse struct {
	Workspaces []Workspace `json:"workspaces"`
	Count      int         `json:"count"`
}

// Workspace is one Coder workspace: a fleet agent.
type Workspace struct {
	ID                      string              `json:"id"`
	CreatedAt               time.Time           `json:"created_at"`
	UpdatedAt               time.Time           `json:"updated_at"`
	OwnerID                 string              `json:"owner_id"`
	OwnerName               string              `json:"owner_name"`
	OrganizationID          string              `json:"organization_id"`
	OrganizationName        string              `json:"organization_name"`
	TemplateID              string              `json:"template_id"`
	TemplateName            string              `json:"template_name"`
	TemplateDisplayName     string              `json:"template_display_name"`
	TemplateActiveVersionID string              `json:"template_active_version_id"`
	LatestBuild             WorkspaceBuild      `json:"latest_build"`
	LatestAppStatus         *WorkspaceAppStatus `json:"latest_app_status"`
	Outdated                bool                `json:"outdated"`
	Name                    string              `json:"name"`
	LastUsedAt              time.Time           `json:"last_used_at"`
	DeletingAt              *time.Time          `json:"deleting_at"`
	Health                  WorkspaceHealth     `json:"health"`
}

// WorkspaceHealth says whether a workspace's agents are healthy.
type WorkspaceHealth struct {
	Healthy       bool     `json:"healthy"`
	FailingAgents []string `json:"failing_agents"`
}

// Build transitions.
const (
	TransitionStart  = "start"
	TransitionStop   = "stop"
	TransitionDelete = "delete"
)

// Build statuses (WorkspaceBuild.Status), derived by Coder from the job's
// status and the transition.
const (
	BuildPending   = "pending"
	BuildStarting  = "starting"
	BuildRunning   = "running"
	BuildStopping  = "stopping"
	BuildStopped   = "stopped"
	BuildFailed    = "failed"
	BuildCanceling = "canceling"
	BuildCanceled  = "canceled"
	BuildDeleting  = "deleting"
	BuildDeleted   = "deleted"
)

// Job statuses (ProvisionerJob.Status).
const (
	JobPending   = "pending"
	JobRunning   = "running"
	JobSucceeded = "succeeded"
	JobFailed    = "failed"
	JobCanceling = "canceling"
	JobCanceled  = "canceled"
)

// WorkspaceBuild is a workspace's build: the answer of
// POST /api/v2/workspaces/{id}/builds and a workspace's latest_build.
type WorkspaceBuild struct {
	ID                 string              `json:"id"`
	CreatedAt          time.Time           `json:"created_at"`
	UpdatedAt          time.Time           `json:"updated_at"`
	WorkspaceID        string              `json:"workspace_id"`
	WorkspaceName      string              `json:"workspace_name"`
	WorkspaceOwnerID   string              `json:"workspace_owner_id"`
	WorkspaceOwnerName string              `json:"workspace_owner_name"`
	TemplateVersionID  string              `json:"template_version_id"`
	BuildNumber        int                 `json:"build_number"`
	Transition         string              `json:"transition"`
	InitiatorName      string              `json:"initiator_name"`
	Job                ProvisionerJob      `json:"job"`
	Reason             string              `json:"reason"`
	Resources          []WorkspaceResource `json:"resources"`
	Status             string              `json:"status"`
	// TemplateVersionPresetID is the preset the build used (the fleet
	// role); null for a build without one.
	TemplateVersionPresetID *string `json:"template_version_preset_id"`
}

// ProvisionerJob is the job behind a build.
type ProvisionerJob struct {
	ID          string     `json:"id"`
	CreatedAt   time.Time  `json:"created_at"`
	StartedAt   *time.Time `json:"started_at,omitempty"`
	CompletedAt *time.Time `json:"completed_at,omitempty"`
	Status      string     `json:"status"`
	Error       string     `json:"error,omitempty"`
}

// WorkspaceResource is a resource of a build; agents live in some.
type WorkspaceResource struct {
	ID                  string           `json:"id"`
	CreatedAt           time.Time        `json:"created_at"`
	JobID               string           `json:"job_id"`
	WorkspaceTransition string           `json:"workspace_transition"`
	Type                string           `json:"type"`
	Name                string           `json:"name"`
	Hide                bool             `json:"hide"`
	Agents              []WorkspaceAgent `json:"agents,omitempty"`
}

// Agent connection statuses (WorkspaceAgent.Status).
const (
	AgentConnecting   = "connecting"
	AgentConnected    = "connected"
	AgentDisconnected = "disconnected"
	AgentTimeout      = "timeout"
)

// Agent lifecycle states (WorkspaceAgent.LifecycleState) the fleet tells
// apart; Coder has more (start_timeout, start_error, shutting_down, off...).
const (
	LifecycleCreated  = "created"
	LifecycleStarting = "starting"
	LifecycleReady    = "ready"
)

// WorkspaceAgent is the Coder agent running in a workspace resource.
type WorkspaceAgent struct {
	ID               string         `json:"id"`
	CreatedAt        time.Time      `json:"created_at"`
	UpdatedAt        time.Time      `json:"updated_at"`
	FirstConnectedAt *time.Time     `json:"first_connected_at,omitempty"`
	LastConnectedAt  *time.Time     `json:"last_connected_at,omitempty"`
	StartedAt        *time.Time     `json:"started_at,omitempty"`
	ReadyAt          *time.Time     `json:"ready_at,omitempty"`
	Status           string         `json:"status"`
	LifecycleState   string         `json:"lifecycle_state"`
	Name             string         `json:"name"`
	ResourceID       string         `json:"resource_id"`
	Version          string         `json:"version"`
	Apps             []WorkspaceApp `json:"apps"`
}

// WorkspaceApp is an app of an agent; the fleet talks to the AgentAPI one.
type WorkspaceApp struct {
	ID          string `json:"id"`
	URL         string `json:"url,omitempty"`
	External    bool   `json:"external"`
	Slug        string `json:"slug"`
	DisplayName string `json:"display_name"`
	// Subdomain apps are served at their own host under the deployment's
	// wildcard app host; the others under /@{owner}/{workspace}.{agent}/apps/.
	Subdomain bool `json:"subdomain"`
	// SubdomainName is the host label Coder computed for a subdomain app
	// (absent from older responses).
	SubdomainName string               `json:"subdomain_name,omitempty"`
	SharingLevel  string               `json:"sharing_level"`
	Health        string               `json:"health"`
	Hidden        bool                 `json:"hidden"`
	Statuses      []WorkspaceAppStatus `json:"statuses"`
}

// App status states (WorkspaceAppStatus.State).
const (
	AppStateWorking  = "working"
	AppStateIdle     = "idle"
	AppStateComplete = "complete"
	AppStateFailure  = "failure"
)

// WorkspaceAppStatus is a status an app reported (latest_app_status, and
// an app's statuses[], oldest first).
type WorkspaceAppStatus struct {
	ID                 string    `json:"id"`
	CreatedAt          time.Time `json:"created_at"`
	WorkspaceID        string    `json:"workspace_id"`
	AgentID            string    `json:"agent_id"`
	AppID              string    `json:"app_id"`
	State              string    `json:"state"`
	Message            string    `json:"message"`
	URI                string    `json:"uri"`
	NeedsUserAttention bool      `json:"needs_user_attention"`
}

// CreateWorkspaceRequest is the body of
// POST /api/v2/organizations/{org}/members/me/workspaces.
type CreateWorkspaceRequest struct {
	Name                    string                    `json:"name"`
	TemplateID              string                    `json:"template_id,omitempty"`
	TemplateVersionID       string                    `json:"template_version_id,omitempty"`
	TemplateVersionPresetID string                    `json:"template_version_preset_id,omitempty"`
	RichParameterValues     []WorkspaceBuildParameter `json:"rich_parameter_values,omitempty"`
}

// WorkspaceBuildParameter is one rich parameter value of a build.
type WorkspaceBuildParameter struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// CreateWorkspaceBuildRequest is the body of
// POST /api/v2/workspaces/{id}/builds.
type CreateWorkspaceBuildRequest struct {
	Transition string `json:"transition"`
}

// Response is Coder's error body: a message, an optional detail and, for
// a rejected input, the fields at fault.
type Response struct {
	Message     string            `json:"message"`
	Detail      string            `json:"detail,omitempty"`
	Validations []ValidationError `json:"validations,omitempty"`
}

// ValidationError names one field Coder rejected.
type ValidationError struct {
	Field  string `json:"field"`
	Detail string `json:"detail"`
}

// AppHostResponse is the answer of GET /api/v2/applications/host: the
// wildcard host of subdomain apps ("*.apps.example.com"), "" when the
// deployment has none.
type AppHostResponse struct {
	Host string `json:"host"`
}
