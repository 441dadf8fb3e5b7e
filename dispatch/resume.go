package dispatch

import (
	"context"

	"github.com/agentinfra/agentinfra/supervision/supervised"
	tasksvc "github.com/agentinfra/agentinfra/task"
)

// Resume is a dispatch that resumes the task's supervised run whose
// supervisor died: the run's session (reopened for it by whoever resumes
// it), the CLI's own session it continues, and what the CLI is told.
type Resume struct {
	// Session is the run's session in the store.
	Session int64
	// Native is the CLI's own session ("" when the CLI never said: the run
	// starts a new one, told what was done).
	Native string
	// Message is the first prompt of a CLI that continues its session.
	Message string
	// Done is what was done before, after the task's prompt, for a CLI
	// that cannot continue its session.
	Done string
	// By is who resumed the run and Why the status log's reason ("resumed
	// by @ana").
	By  tasksvc.Actor
	Why string
}

// resumedPrompt is what the resumed run sends first: the message of a CLI
// that continues its session, else the task's prompt and what was done.
func (p *Plan) resumedPrompt() string {
	if p.opts.Resume.Native == "" {
		return p.promptIfNew
	}
	return p.opts.Resume.Message
}

// resumeOf is the run the resumed dispatch takes up.
func (p *Plan) resumeOf() *supervised.Resume {
	r := p.opts.Resume
	return &supervised.Resume{Session: r.Session, Native: r.Native, PromptIfNew: p.promptIfNew}
}

// claimResumed is a resumed run's claim: the lifecycle's reopen of the
// task (BLOCKED → IN_PROGRESS, held by the run's agent, "resumed by …"),
// refused when the task moved on since the run was interrupted.
func (p *Plan) claimResumed(ctx context.Context) error {
	r := p.opts.Resume
	res, err := tasksvc.Resume(ctx, p.ws, p.Task.ID, p.Mention, r.Why, r.By, p.At)
	if err != nil {
		return err
	}
	p.Outcome.StatusBefore, p.Outcome.StatusAfter = res.Before.Status, res.After.Status
	return nil
}
