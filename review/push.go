package review

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentinfra/agentinfra/agenterr"
)

// PublishedPrefix is where a workspace's clone keeps, per branch, the
// commit its last publish put on the remote: the lease of the next one.
// No fetch, clone refspec or person writes it — unlike the remote-tracking
// ref, which a clone made after a person pushed the branch already has at
// their commit, and which any `git fetch` in the workspace moves.
const PublishedPrefix = "refs/agentinfra/published/"

// pushBranch pushes the agent's branch from the workspace's clone g is in
// to remote, over whatever the remote branch holds only when this clone
// put it there or when nothing is lost: an agent's branch started again
// from the base is not a fast-forward of its last push, but a
// branch a person also pushes to (a fleet branch_prefix naming theirs, a
// mistake) must never lose their commits.
//
// The lease expects the remote branch at PublishedPrefix+branch (absent:
// no branch). No leading "+" on the refspec: with it git forces and
// ignores the lease. A refused lease is looked at on the remote: a branch
// deleted there since (a person deleting it after the landing, as
// GitHub's "delete branch" does) is pushed again as new; a tip the push
// contains (a fast-forward: nothing on the remote is lost — also an
// earlier publish whose record here was cut short) goes with that tip as
// the lease, as does a tip pinned here as a change this clone published;
// any other tip holds commits this clone did not push, a conflict, and
// nothing is pushed.
func pushBranch(ctx context.Context, g git, remote, branch, worktree string) error {
	ref := "refs/heads/" + branch
	published := PublishedPrefix + branch
	head, err := g.rev(ctx, ref)
	if err != nil {
		return err
	}
	push := func(expect string) error {
		_, err := g.run(ctx, nil, "push", "--quiet", "--no-verify", "--force-with-lease="+ref+":"+expect, "--", remote, ref+":"+ref)
		if err == nil {
			_, err = g.run(context.WithoutCancel(ctx), nil, "update-ref", "-m", "agentinfra: published", published, head)
		}
		return err
	}
	unavailable := func(err error) error {
		return &agenterr.Error{Kind: agenterr.Unavailable, Field: "remote", Value: remote,
			Reason: fmt.Sprintf("%s could not be pushed to %s (%s): the change is committed in %s; push it by hand (git push %s %s), then record it", branch, remote, gitSaid(err), worktree, remote, branch), Err: err}
	}
	last, _ := g.rev(ctx, published) // "" before the first publish
	err = push(last)
	if err == nil {
		return nil
	}
	out, lerr := g.out(ctx, "ls-remote", "--", remote, ref)
	if lerr != nil {
		return unavailable(err)
	}
	there, _, _ := strings.Cut(strings.TrimSpace(out), "\t")
	switch {
	case there == last:
		return unavailable(err) // the lease held: refused for another reason
	case there == "" || keeps(g.isAncestor(ctx, there, head)) || g.pinnedHere(ctx, there):
		// Deleted on the remote since, a tip the push keeps, or one this
		// clone published: pushed with what is there now as the lease
		// (refused should someone push meanwhile).
		if err := push(there); err != nil {
			return unavailable(err)
		}
		return nil
	}
	return &agenterr.Error{Kind: agenterr.Conflict, Field: "branch", Value: branch,
		Reason: fmt.Sprintf("the remote branch %s on %s has commits this workspace did not push (%s): agentinfra never overwrites them; the change is committed in %s — pick another fleet branch_prefix, or remove that branch on %s once its commits are safe elsewhere, then publish again", branch, remote, short(there), worktree, remote)}
}

// keeps is isAncestor's answer, false when git could not tell (a commit
// this clone does not have is not in head's history).
func keeps(yes bool, err error) bool { return err == nil && yes }

// pinnedHere says whether commit is a change this clone published (a pin
// PinPrefix+ID points at it): an earlier publish, from before the
// published ref was kept or whose ref update was cut short.
func (g git) pinnedHere(ctx context.Context, commit string) bool {
	out, err := g.out(ctx, "for-each-ref", "--points-at", commit, "--format=%(refname)", strings.TrimSuffix(PinPrefix, "/"))
	return err == nil && out != ""
}
