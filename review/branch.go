package review

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/agentinfra/agentinfra/agenterr"
)

// BranchInput names an agent's worktree and branch, and the task it is
// about to work on.
type BranchInput struct {
	Worktree   string
	Branch     string
	BaseBranch string
	// Task is the matrix task of the next run.
	Task string
}

// PrepareBranch puts an agent's branch where its next run on a task
// starts, so that one change never carries another task's work: at the
// task's change when it has one that has not landed (changes were
// requested: the agent goes on with its own work), else at the base
// branch's tip. It returns the commit the run starts from (RecordInput.Start).
//
// The worktree is moved the way git checkout moves it, and only when
// nothing can be lost: a worktree with uncommitted changes is refused
// naming them, and so is a branch whose commits neither the base branch
// nor a recorded change holds.
func (s *Service) PrepareBranch(ctx context.Context, in BranchInput) (string, error) {
	g, gitDir, err := worktreeGit(ctx, in.Worktree)
	if err != nil {
		return "", err
	}
	target := "refs/heads/" + in.BaseBranch
	if in.Task != "" {
		dir, err := s.folder(ctx, in.Task)
		if err == nil {
			c, err := readChange(filepath.Join(dir, FileName))
			switch {
			case err == nil && c.State != StateLanded && c.Branch == in.Branch:
				target = c.Head
			case err != nil && !errors.Is(err, fs.ErrNotExist):
				return "", err
			}
		}
	}
	var to string
	err = withLock(ctx, gitDir, func() error {
		rev, err := g.rev(ctx, target)
		if err != nil {
			return &agenterr.Error{Kind: agenterr.Invalid, Field: "base_branch", Value: in.BaseBranch, Reason: "no such branch to start from", Err: err}
		}
		to = rev
		return moveBranch(ctx, g, in.Branch, in.BaseBranch, "", rev)
	})
	return to, err
}

// moveBranch moves the worktree g and its branch to the commit to, with
// git's two-tree checkout (read-tree -m -u) and a compare-and-set of the
// branch. from is the commit the branch must be at ("" = wherever it is,
// provided its commits are kept elsewhere: the base branch or a change's
// pin). A dirty worktree is refused, naming the files.
func moveBranch(ctx context.Context, g git, branch, baseBranch, from, to string) error {
	if err := onBranch(ctx, g, branch); err != nil {
		return err
	}
	dirty, err := g.dirty(ctx)
	if err != nil {
		return err
	}
	if len(dirty) > 0 {
		return &agenterr.Error{Kind: agenterr.Conflict, Field: "worktree",
			Reason: fmt.Sprintf("the worktree %s has uncommitted work that no change records: %s; record the change (a run's end does) or commit it, then try again; nothing was moved", g.dir, listFiles(dirty))}
	}
	tip, err := g.rev(ctx, "refs/heads/"+branch)
	if err != nil {
		return err
	}
	if tip == to {
		return nil
	}
	if from != "" && tip != from {
		return &agenterr.Error{Kind: agenterr.Conflict, Field: "branch",
			Reason: fmt.Sprintf("%s is at %s, not at the change's %s: the agent has moved on; left as it is", branch, short(tip), short(from))}
	}
	if from == "" {
		holders, err := g.out(ctx, "for-each-ref", "--count=1", "--contains", tip, "--format=%(refname)", "refs/heads/"+baseBranch, strings.TrimSuffix(PinPrefix, "/"))
		if err != nil {
			return err
		}
		if holders == "" {
			lost, _ := g.out(ctx, "log", "--format=%h %s", "-n", "5", tip, "--not", "refs/heads/"+baseBranch)
			return &agenterr.Error{Kind: agenterr.Conflict, Field: "branch",
				Reason: fmt.Sprintf("%s has commits that neither %s nor a recorded change holds (%s); record them as a task's change, or keep them on a branch of their own (git branch NAME %s), then try again; nothing was moved",
					branch, baseBranch, strings.ReplaceAll(lost, "\n", "; "), short(tip))}
		}
	}
	if _, err := g.run(ctx, nil, "read-tree", "-m", "-u", tip, to); err != nil {
		return &agenterr.Error{Kind: agenterr.Conflict, Field: "worktree", Reason: fmt.Sprintf("the worktree %s could not be moved to %s; nothing was moved", g.dir, short(to)), Err: err}
	}
	if err := g.updateRef(ctx, "refs/heads/"+branch, to, tip, "agentinfra: "+branch+" starts from "+short(to)); err != nil {
		// Someone moved the branch meanwhile: the files go back.
		_, _ = g.run(context.WithoutCancel(ctx), nil, "read-tree", "-m", "-u", to, tip)
		return &agenterr.Error{Kind: agenterr.Conflict, Field: "branch", Reason: fmt.Sprintf("%s moved while it was being moved; nothing was moved: try again", branch), Err: err}
	}
	return nil
}

// FindWorktree returns the worktree of the repository at dir that has
// branch checked out ("" when none has).
func FindWorktree(ctx context.Context, dir, branch string) (string, error) {
	wts, err := worktrees(ctx, git{dir: dir})
	if err != nil {
		return "", err
	}
	for _, w := range wts {
		if w.branch == "refs/heads/"+branch {
			return w.path, nil
		}
	}
	return "", nil
}

// CurrentBranch is the branch checked out in the worktree at dir ("" when
// its HEAD is detached).
func CurrentBranch(ctx context.Context, dir string) string {
	b, _ := git{dir: dir}.out(ctx, "symbolic-ref", "--short", "-q", "HEAD")
	return b
}
