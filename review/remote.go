package review

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentinfra/agentinfra/agenterr"
)

// A change made in a Coder workspace (docs/review.md, "On Coder"): the
// agent's worktree is in the workspace, the repository it lands in is the
// person's clone. The workspace's host publishes it — commits what the
// agent left, pushes its branch to the repository's remote — and this
// machine records it by fetching that branch into its clone; it then lands
// as every change does, in the clone, with the same refusals.

// PublishInput is what a workspace's host knows when its agent's run on
// a task ends: the agent's worktree and branch, the remote to push to.
type PublishInput struct {
	// Task is the task's ID, Subject its description's first line (the
	// task is in the person's matrix, not in the workspace's).
	Task    string
	Subject string
	Agent   string
	Run     string
	// Worktree is the agent's worktree, on Branch.
	Worktree string
	Branch   string
	// Remote is the remote the branch is pushed to (a name, "origin").
	Remote string
}

// Published is a change pushed: its branch on the remote and last commit.
type Published struct {
	Branch string `json:"branch"`
	Head   string `json:"head"`
	// Committed is the commit made of what the agent left uncommitted
	// ("" when it left nothing).
	Committed string `json:"committed,omitempty"`
}

// Publish commits what the agent left uncommitted in its worktree on its
// branch (as Record does: message "ID: subject", the agent as author, the
// run in a trailer), pins the branch's tip (PinPrefix+ID: the commits stay
// in the workspace's clone whatever happens to the branch) and pushes the
// branch to the remote. The push need not be a fast-forward (an agent's
// branch started again from the base), so it may overwrite the remote
// branch, but only what this clone pushed there (pushBranch): a
// person's commits on it refuse the publish, which changes nothing on the
// remote. No hook runs (--no-verify).
func Publish(ctx context.Context, in PublishInput) (Published, error) {
	for _, f := range []struct{ name, v string }{{"task", in.Task}, {"agent", in.Agent}, {"worktree", in.Worktree}, {"branch", in.Branch}, {"remote", in.Remote}} {
		if strings.TrimSpace(f.v) == "" {
			return Published{}, &agenterr.Error{Kind: agenterr.Invalid, Field: f.name, Reason: "a change is published with its task, agent, worktree, branch and remote: " + f.name + " is empty"}
		}
	}
	g, gitDir, err := worktreeGit(ctx, in.Worktree)
	if err != nil {
		return Published{}, err
	}
	if err := onBranch(ctx, g, in.Branch); err != nil {
		return Published{}, err
	}
	var out Published
	err = withLock(ctx, gitDir, func() error {
		committed, err := commitLeftovers(ctx, g, in.Task+": "+in.Subject, in.Run, in.Agent, in.Worktree, in.Branch)
		if err != nil {
			return err
		}
		head, err := g.rev(ctx, "refs/heads/"+in.Branch)
		if err != nil {
			return err
		}
		if _, err := g.run(ctx, nil, "update-ref", "-m", "agentinfra: change of task "+in.Task, PinPrefix+in.Task, head); err != nil {
			return err
		}
		if err := pushBranch(ctx, g, in.Remote, in.Branch, in.Worktree); err != nil {
			return err
		}
		out = Published{Branch: in.Branch, Head: head, Committed: committed}
		return nil
	})
	return out, err
}

// fetchChange fetches the branch a workspace published from the remote
// into a scratch ref of the clone g is in, and returns its commit, which
// must be the one published (in.Head; "" takes the branch's tip). The
// change's pin (PinPrefix+ID) is Record's to move once everything checks
// out: a refused record leaves the pin — the only ref here holding a
// change in review — where it was. The scratch ref goes when done; its
// commits are the pin's once Record moves it.
func fetchChange(ctx context.Context, g git, in RecordInput) (head string, err error) {
	scratch := fetchPrefix + in.Task
	defer func() {
		if _, derr := g.run(context.WithoutCancel(ctx), nil, "update-ref", "-d", scratch); derr != nil && err == nil {
			err = derr
		}
	}()
	if _, err := g.run(ctx, nil, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--", in.Remote, "+refs/heads/"+in.Branch+":"+scratch); err != nil {
		return "", &agenterr.Error{Kind: agenterr.Unavailable, Field: "remote", Value: in.Remote,
			Reason: fmt.Sprintf("%s could not be fetched from %s (%s): record the change again once the remote answers (review record %s --agent %s --remote %s)", in.Branch, in.Remote, gitSaid(err), in.Task, in.Agent, in.Remote), Err: err}
	}
	head, err = g.rev(ctx, scratch)
	if err != nil {
		return "", err
	}
	if in.Head != "" && head != in.Head {
		return "", &agenterr.Error{Kind: agenterr.Conflict, Field: "head",
			Reason: fmt.Sprintf("%s on %s is at %s, not at %s which the workspace published: it was pushed again since; record the change again", in.Branch, in.Remote, short(head), short(in.Head))}
	}
	return head, nil
}

// errRemoteChecks refuses checks on a change made in a Coder workspace:
// they run in the agent's worktree, which is there.
func errRemoteChecks(c Change) error {
	return &agenterr.Error{Kind: agenterr.Refused, Field: "id", Override: "force",
		Reason: fmt.Sprintf("task %s's change was made in a Coder workspace and fetched from %s: its checks run in the agent's worktree, which is not on this machine; look at it (review show %s), then land it with --force", c.Task, c.Remote, c.Task)}
}
