package dispatch

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentinfra/agentinfra/agentrun"
	"github.com/agentinfra/agentinfra/execute"
	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/runner"
)

// books are a dispatch's books of its run (execute.Books): the claim of
// the task, the tracking note, {stamp}_result.json and the store's row.
type books struct {
	p    *Plan
	x    *execute.Planned
	emit func(runner.Event)
	rec  *record // nil until the tracking note is written
}

// Claim claims the task (Plan.Claim); the row the claim left may have
// rebuilt the prompt and the command, which are what runs.
func (b *books) Claim(ctx context.Context) error {
	if err := b.p.Claim(ctx); err != nil {
		return err
	}
	b.x.Request, b.x.Command = b.p.Request, b.p.Command
	b.emit(runner.Event{Kind: "dispatch", Text: fmt.Sprintf("%s: %s → IN_PROGRESS, %s", b.p.Task.ID, b.p.Outcome.StatusBefore, b.p.Mention)})
	return nil
}

// Open writes the tracking note (naming the run) and keeps the record in
// the result file and in the store's row (without the store, the result
// file still holds it).
func (b *books) Open(ctx context.Context) (agentrun.Recorder, error) {
	rec, err := b.p.startRecord()
	if err != nil {
		return nil, err
	}
	o := &b.p.Outcome
	st, err := openRunStore(ctx, b.p.ws)
	if err != nil {
		o.Warnings = append(o.Warnings, "the run's record is only in its result file: "+err.Error())
	} else {
		rec.st = st
	}
	b.rec = rec
	b.emit(runner.Event{Kind: "dispatch", Text: fmt.Sprintf("running %s (model %s)", o.CLI, mdtext.Or(o.Model, "CLI default"))})
	return rec.recorder(), nil
}

// Close moves the task on, then appends the result to the tracking note
// and writes the result file (so that they say where the task went).
func (b *books) Close(ctx context.Context, end func(stopped bool) error) error {
	err := end(false)
	errs := append([]error{err}, b.rec.finish(&b.p.Outcome)...)
	if b.rec.st != nil { // the store Open opened, or the one finish renewed
		b.rec.st.Close()
	}
	return errors.Join(errs...)
}
