package coder

import (
	"context"
	"fmt"
	"time"

	"github.com/agentinfra/agentinfra/fleet/statefile"
	"github.com/agentinfra/agentinfra/review"
	"github.com/agentinfra/agentinfra/supervision/host"
	"github.com/agentinfra/agentinfra/task"
)

// publishTimeout bounds the host's commit and push of a change.
const publishTimeout = 2 * time.Minute

// recordChange is the end of a supervised agent's completed run on a
// matrix task (docs/review.md, "On Coder"): its host commits what the
// agent left and pushes its branch to the repository's remote, and the
// change is recorded here from the remote (fetched into this machine's
// clone), so that review list, show and approve work on it as on a local
// agent's. The caller holds the agent's lock, before the task moves to
// REVIEW. What fails is returned to go in the run's end reason: the task
// still goes to REVIEW, where `review record` records it by hand.
func (b *Backend) recordChange(ctx context.Context, o observation, rec *agentRecord, r runLine) string {
	if rec == nil || rec.Host == nil || r.TaskID == "" {
		return ""
	}
	fail := func(err error) string {
		return fmt.Sprintf("; the change of task %s was not recorded: %v", r.TaskID, err)
	}
	base := review.CurrentBranch(ctx, b.ws.Root)
	if base == "" {
		return fail(fmt.Errorf("%s has no branch checked out for the change to land on", b.ws.Root))
	}
	info, err := task.ShowTask(ctx, b.ws, r.TaskID)
	if err != nil {
		return fail(err)
	}
	hc, err := b.hostClientFor(ctx, rec, o.ws, publishTimeout)
	if err != nil {
		return fail(err)
	}
	pctx, cancel := context.WithTimeout(ctx, publishTimeout)
	defer cancel()
	pub, err := hc.PublishChange(pctx, host.ChangePublish{Task: r.TaskID, Subject: review.Title(info.Task.Description), Run: r.ID})
	if err != nil {
		return fail(fmt.Errorf("its host did not publish it: %w", err))
	}
	// The change starts where the agent's previous one ended: its
	// workspace's branch goes on from there, and what came before was
	// that change's.
	if _, err := review.New(b.ws, b.now).Record(pctx, review.RecordInput{Task: r.TaskID, Agent: o.ws.Name, Run: r.ID, Worktree: b.ws.Root,
		Branch: pub.Branch, BaseBranch: base, Start: rec.Host.Published, Remote: host.DefaultRemote, Head: pub.Head, Summary: r.Summary}); err != nil {
		return fail(err)
	}
	// The record is read again: the caller's may be older than the lock.
	now, err := b.files.loadRecord(o.ws.Name, o.ws.ID)
	if err == nil && now != nil && now.Host != nil {
		now.Host.Published = pub.Head
		err = statefile.WriteJSON(b.files.record(o.ws.Name), now)
	}
	if err != nil {
		return fail(err)
	}
	return ""
}
