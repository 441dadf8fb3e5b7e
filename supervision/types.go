package supervision

import (
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision/checkpoint"
)

// The store's values as the surfaces see them: the service hands them out
// and takes them back; the surfaces never import the store.
type (
	Session     = store.Session
	Request     = store.Request
	Prompt      = store.Prompt
	Alert       = store.Alert
	Steering    = store.Steering
	Checkpoint  = store.Checkpoint
	AuditEvent  = store.Event
	PendingView = store.PendingView
	PromptView  = store.PromptView
	AlertView   = store.AlertView
	PurgeReport = store.PurgeReport
	Post        = store.Post
	// SessionFilter selects sessions (the zero value: all, newest first).
	SessionFilter = store.SessionFilter
	// DecidedError is the one error of an answer that lost: the request,
	// prompt or alert no longer waited; it names who answered first.
	DecidedError = store.DecidedError
	// LimitError refuses a session beyond max_concurrent_sessions.
	LimitError = store.LimitError
	// CheckpointChange is a file that differs from a checkpoint.
	CheckpointChange = checkpoint.Change
	// DivergedError refuses a restore over files changed since (without force).
	DivergedError = checkpoint.DivergedError
)

// Errors (errors.Is) with their agenterr kinds.
var (
	ErrNotFound      = store.ErrNotFound
	ErrExpired       = store.ErrExpired
	ErrBadTransition = store.ErrBadTransition
	ErrPendingExists = store.ErrPendingExists
)

// Surfaces a person acts through, and the others an item's outcome names.
const (
	SurfaceTerminal   = store.SurfaceTerminal
	SurfaceWeb        = store.SurfaceWeb
	SurfaceSlack      = store.SurfaceSlack
	SurfacePolicy     = store.SurfacePolicy
	SurfaceTimeout    = store.SurfaceTimeout
	SurfaceAgent      = store.SurfaceAgent
	SurfaceSupervisor = store.SurfaceSupervisor
)

// Approval scopes: an approval for the rest of its session, or always (a
// policy rule).
const (
	ScopeSession = store.ScopeSession
	ScopeAlways  = store.ScopeAlways
)

// Session statuses and modes.
const (
	SessionCreated     = store.SessionCreated
	SessionActive      = store.SessionActive
	SessionPaused      = store.SessionPaused
	SessionTerminated  = store.SessionTerminated
	SessionInterrupted = store.SessionInterrupted

	ModeLocal  = store.ModeLocal
	ModeRemote = store.ModeRemote
	ModeHybrid = store.ModeHybrid
)

// Modes lists the session modes.
var Modes = store.Modes

// LiveStatuses are the statuses of a session that has not ended.
var LiveStatuses = []string{SessionCreated, SessionActive, SessionPaused}

// Request statuses, kinds and risks.
const (
	StatusPending     = store.StatusPending
	StatusApproved    = store.StatusApproved
	StatusRejected    = store.StatusRejected
	StatusExpired     = store.StatusExpired
	StatusInterrupted = store.StatusInterrupted
	StatusWithdrawn   = store.StatusWithdrawn

	RiskLow      = store.RiskLow
	RiskHigh     = store.RiskHigh
	RiskCritical = store.RiskCritical
)

// Continuation prompts: statuses, kinds and the answers.
const (
	PromptPending   = store.PromptPending
	PromptContinued = store.PromptContinued
	PromptRefined   = store.PromptRefined
	PromptStopped   = store.PromptStopped
	PromptExpired   = store.PromptExpired
	PromptWithdrawn = store.PromptWithdrawn

	ActionContinue = store.ActionContinue
	ActionRefine   = store.ActionRefine
	ActionStop     = store.ActionStop
)

// PromptKinds lists why a prompt is raised.
var PromptKinds = store.PromptKinds

// Stall alerts: statuses and the actions on them.
const (
	AlertPending       = store.AlertPending
	AlertNudged        = store.AlertNudged
	AlertSelfRecovered = store.AlertSelfRecovered
	AlertEscalated     = store.AlertEscalated
	AlertDismissed     = store.AlertDismissed

	AlertNudge   = store.AlertNudge
	AlertDismiss = store.AlertDismiss
	AlertStop    = store.AlertStop
)

// Actors that are not people, and the items a remote surface posts about.
const (
	ActorWatchdog   = store.ActorWatchdog
	ActorAgentinfra = store.ActorAgentinfra

	ItemSession = store.ItemSession
	ItemRequest = store.ItemRequest
	ItemPrompt  = store.ItemPrompt
	ItemAlert   = store.ItemAlert
)

// Handle writes a person as @name (system actors as they are).
func Handle(name string) string { return store.Handle(name) }
