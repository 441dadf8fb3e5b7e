package agentrun

import (
	"errors"
	"time"

	"github.com/agentinfra/agentinfra/contain"
	"github.com/agentinfra/agentinfra/runner"
)

// Callers of a run.
const (
	CallerDispatch = "dispatch"
	CallerFleet    = "fleet"
)

// Run statuses (the fleet's history shows them).
const (
	StatusPending   = "pending"
	StatusRunning   = "running"
	StatusCompleted = "completed"
	StatusFailed    = "failed"
	StatusStopped   = "stopped"
)

// Outcomes of a run (dispatch prints them).
const (
	OutcomeSuccess  = "success"
	OutcomeFailed   = "failed"
	OutcomeCanceled = "canceled"
	OutcomeTimedOut = "timed_out"
	OutcomeStopped  = "stopped"
)

// Record is one run of an agent CLI, the same for dispatch and the fleet:
// what ran, for whom, and how it ended. Dispatch's {stamp}_result.json
// (with its prompt parts and files) and the fleet's runs/{run}.result.json
// are both a Record.
type Record struct {
	// RunID names the run: the fleet's {agent}-{n}, dispatch's {task}-{stamp}.
	RunID  string `json:"run_id,omitempty"`
	Caller string `json:"caller,omitempty"` // dispatch | fleet
	// Agent is who works: the task's holder, an @mention (@papi, @coder).
	Agent string `json:"agent,omitempty"`
	// Actor is who asked for the run (a person, an agent, ai_controller).
	Actor   string `json:"actor,omitempty"`
	TaskID  string `json:"task_id,omitempty"` // "" for a free-text run
	Summary string `json:"summary,omitempty"`
	// Status is the run's (pending, running, completed, failed, stopped).
	Status string `json:"status,omitempty"`
	// Outcome: success, failed, timed_out, canceled, stopped (dispatch also
	// dry_run).
	Outcome string `json:"outcome"`
	// Reason says how the run ended, in a line.
	Reason       string `json:"reason,omitempty"`
	CLI          string `json:"cli"`
	Binary       string `json:"binary"` // the executable that runs ("" if not found)
	Mode         string `json:"mode"`
	Model        string `json:"model"`
	ModelReason  string `json:"model_reason"`
	ApprovalMode string `json:"approval_mode"`
	Session      string `json:"session"` // the session resumed ("" = new)
	Timeout      string `json:"timeout"`
	Dir          string `json:"dir,omitempty"`
	// Argv (secrets redacted, the prompt as a placeholder) and Env (the
	// environment additions, redacted) are the command that runs.
	Argv        []string `json:"argv"`
	Env         []string `json:"env"`
	Stdin       bool     `json:"prompt_on_stdin"`
	PromptBytes int      `json:"prompt_bytes"`
	// StatusBefore and StatusAfter are the matrix task's status around the
	// run.
	StatusBefore string     `json:"status_before"`
	StatusAfter  string     `json:"status_after"`
	CreatedAt    *time.Time `json:"created_at,omitempty"`
	StartedAt    *time.Time `json:"started_at,omitempty"`
	EndedAt      *time.Time `json:"ended_at,omitempty"`
	ExitCode     *int       `json:"exit_code,omitempty"`
	// SessionID is the CLI's session, to resume.
	SessionID string `json:"session_id,omitempty"`
	// LogFile is the run's log (every event the CLI printed), JSONL.
	LogFile string `json:"log_file,omitempty"`
	// Scope marks the run's processes (package contain).
	Scope    contain.Scope  `json:"scope,omitzero"`
	Warnings []string       `json:"warnings"`
	Result   *runner.Result `json:"result"` // nil before the run ended (and for a dry run)
}

// SetCommand notes in the record the command that runs for req (its argv
// with secrets redacted and the prompt as a placeholder, the environment it
// adds, redacted, how the prompt is given).
func (r *Record) SetCommand(req runner.Request, cmd runner.Command) {
	r.Argv = runner.RedactArgv(cmd.Argv, cmd.PromptArg)
	r.Env = runner.RedactEnv(append(append([]string{}, req.Env...), cmd.Env...))
	r.Stdin, r.PromptBytes = cmd.Stdin != "", len(req.Prompt)
}

// Conclude sets how the run ended from the CLI's result and the error Exec
// returned: the outcome, the run's status and the reason, the exit code and
// session. stopped says a person or a manager agent stopped the run; a
// result that says who stopped it (res.Stopped) gives the reason.
func (r *Record) Conclude(res runner.Result, err error, stopped bool, at time.Time) {
	r.Result = &res
	r.EndedAt = &at
	code := res.ExitCode
	r.ExitCode = &code
	if res.SessionID != "" {
		r.SessionID = res.SessionID
	}
	switch {
	case res.Stopped != "": // a person stopped the run's session
		r.Outcome, r.Status, r.Reason = OutcomeStopped, StatusStopped, res.Stopped
	case stopped:
		r.Outcome, r.Status, r.Reason = OutcomeStopped, StatusStopped, "stopped"
	case res.TimedOut:
		r.Outcome, r.Status, r.Reason = OutcomeTimedOut, StatusFailed, "timed out: "+res.Error
	case res.Canceled:
		r.Outcome, r.Status, r.Reason = OutcomeCanceled, StatusStopped, "canceled: "+res.Error
	case err != nil && !errors.Is(err, runner.ErrAgentFailed):
		r.Outcome, r.Status, r.Reason = OutcomeFailed, StatusFailed, err.Error()
	case err != nil || !res.OK():
		r.Outcome, r.Status, r.Reason = OutcomeFailed, StatusFailed, res.Error
	default:
		r.Outcome, r.Status, r.Reason = OutcomeSuccess, StatusCompleted, "completed"
	}
}

// Concluded reports whether the run ended itself (Conclude: its exit code
// is known), not ended by whoever found its process dead (Interrupted sets
// no exit code).
func (r *Record) Concluded() bool { return r.EndedAt != nil && r.ExitCode != nil }

// Interrupted ends a run whose process died without recording it.
func (r *Record) Interrupted(reason string, at time.Time) {
	r.EndedAt = &at
	r.Outcome, r.Status, r.Reason = OutcomeFailed, StatusFailed, reason
}

// Recorder keeps a run's record and its log. Files keeps them as files;
// the supervision issue's store keeps them in SQLite behind the same
// interface.
type Recorder interface {
	// Save writes the record as it is now (at the start of the run and at
	// its end).
	Save(rec *Record) error
	// Log opens the run's log for appending.
	Log(rec *Record) (LogWriter, error)
}
