package review

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentinfra/agentinfra/agenterr"
)

// pushBranch pushes the agent's branch from the workspace's clone g is in
// to remote, over whatever the remote branch holds only when this clone
// put it there: after a landing the agent's branch starts again from the
// base, so its pushes are not fast-forwards, but a branch a person also
// pushes to (a fleet branch_prefix naming theirs, a mistake) must never
// lose their commits.
//
// The lease's expected value is the clone's remote-tracking ref
// (refs/remotes/REMOTE/BRANCH), which each successful push moves to what
// it pushed; no tracking ref expects no remote branch. No leading "+" on
// the refspec: with it git forces and ignores the lease. A refused lease
// is looked at on the remote: a branch deleted there since (a person
// deleting it after the landing, as GitHub's "delete branch" does) is
// pushed again as new; a branch with commits this clone did not push is a
// conflict, and nothing is pushed. A fetch in the workspace also moves the
// tracking ref: what it fetched then counts as pushed by this clone.
func pushBranch(ctx context.Context, g git, remote, branch, worktree string) error {
	ref := "refs/heads/" + branch
	push := func(lease string) error {
		_, err := g.run(ctx, nil, "push", "--quiet", "--no-verify", "--force-with-lease="+lease, "--", remote, ref+":"+ref)
		return err
	}
	unavailable := func(err error) error {
		return &agenterr.Error{Kind: agenterr.Unavailable, Field: "remote", Value: remote,
			Reason: fmt.Sprintf("%s could not be pushed to %s (%s): the change is committed in %s; push it by hand (git push %s %s), then record it", branch, remote, gitSaid(err), worktree, remote, branch), Err: err}
	}
	err := push(ref)
	if err == nil {
		return nil
	}
	out, lerr := g.out(ctx, "ls-remote", "--", remote, ref)
	if lerr != nil {
		return unavailable(err)
	}
	there, _, _ := strings.Cut(out, "\t")
	if there == "" {
		// Deleted on the remote since this clone's last push: push it as
		// new, refused should someone push it meanwhile.
		if err := push(ref + ":"); err != nil {
			return unavailable(err)
		}
		return nil
	}
	if tracked, _ := g.rev(ctx, "refs/remotes/"+remote+"/"+branch); there == tracked {
		return unavailable(err) // the lease held: refused for another reason
	}
	return &agenterr.Error{Kind: agenterr.Conflict, Field: "branch", Value: branch,
		Reason: fmt.Sprintf("the remote branch %s on %s has commits this workspace did not push (%s): agentinfra never overwrites them; the change is committed in %s — pick another fleet branch_prefix, or remove that branch on %s once its commits are safe elsewhere, then publish again", branch, remote, short(there), worktree, remote)}
}
