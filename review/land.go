package review

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/config"
	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/task"
)

// ErrConflict is a landing refused because the change conflicts with the
// base branch (errors.Is); the error names the files.
var ErrConflict = agenterr.New(agenterr.Conflict, "the change conflicts with its base branch")

// ErrChecks is a landing refused because the change's checks failed or
// have not run (errors.Is); ApproveOptions.Force lands it anyway.
var ErrChecks = agenterr.New(agenterr.Refused, "the change's checks have not passed")

// ErrLocalChanges is a landing refused because a worktree that has the
// base branch checked out has local changes to files the change touches.
var ErrLocalChanges = agenterr.New(agenterr.Conflict, "local changes are in the way")

// ApproveOptions say how a change lands.
type ApproveOptions struct {
	// Strategy is squash, merge or rebase ("" = review.strategy, else squash).
	Strategy string
	// Force lands a change whose checks failed or have not run.
	Force bool
	// By is who approves (the task README's status log and Review section
	// name them; the landing's Agentinfra-Approved-By trailer too).
	By task.Actor
}

// ApproveResult is what a landing did.
type ApproveResult struct {
	Change Change      `json:"change"`
	Task   matrix.Task `json:"task"`
	// Reset is the commit the agent's branch was moved to ("" when it was
	// left as it is: Notes say why).
	Reset string `json:"reset,omitempty"`
	// Updated are the worktrees with the base branch checked out whose
	// files were brought to the new tip.
	Updated []string `json:"updated_worktrees,omitempty"`
	Notes   []string `json:"notes,omitempty"`
}

// Approve lands task id's change on its base branch, moves the task to
// DONE, and moves the agent's branch to the new base.
//
// Nothing changes when it is refused: a task not in REVIEW; checks that
// failed or have not run (unless o.Force); a change that conflicts with
// the base (ErrConflict: the files are named, the change is marked
// "conflict", the base branch and the agent's branch stay as they were); a
// worktree that has the base branch checked out with local changes to
// files the change touches (ErrLocalChanges, naming them). The base branch
// moves with a compare-and-set, so two landings at once never lose one;
// a worktree that has it checked out is brought along with git's two-tree
// checkout, which leaves every other local change as it is.
//
// Approving a change that landed but whose task is not DONE yet (the task
// write failed) finishes it.
func (s *Service) Approve(ctx context.Context, id string, o ApproveOptions) (ApproveResult, error) {
	if err := requireGit(); err != nil {
		return ApproveResult{}, err
	}
	set, err := s.settings()
	if err != nil {
		return ApproveResult{}, err
	}
	strategy := o.Strategy
	if strategy == "" {
		strategy = set.Strategy
	}
	if !slices.Contains(config.ReviewStrategies, strategy) {
		return ApproveResult{}, &agenterr.Error{Kind: agenterr.Invalid, Field: "strategy", Value: strategy, Valid: config.ReviewStrategies}
	}
	c, dir, err := s.load(ctx, id)
	if err != nil {
		return ApproveResult{}, err
	}
	if o.By == "" {
		o.By = task.ActorFrom(ctx)
	}
	var res ApproveResult
	already := false // the change had landed, its task DONE: nothing moved
	err = withLock(ctx, c.GitDir, func() error {
		if c, err = readChange(filepath.Join(dir, FileName)); err != nil {
			return err
		}
		info, err := task.ShowTask(ctx, s.ws, id)
		if err != nil {
			return err
		}
		v, err := task.LoadVocabulary(s.ws)
		if err != nil {
			return err
		}
		if c.State == StateLanded {
			if task.IsStatus(v, info.Task, task.StatusDone) {
				res, already = ApproveResult{Change: c, Task: info.Task, Notes: []string{"the change had landed already"}}, true
				return nil
			}
			return s.finishLanding(ctx, c, o, &res)
		}
		if !task.IsStatus(v, info.Task, task.StatusReview) {
			return &agenterr.Error{Kind: agenterr.Conflict, Err: task.ErrNotInReview, Field: "id",
				Reason: fmt.Sprintf("task %s is %s; only a task in REVIEW is landed", id, info.Task.Status)}
		}
		if c.State == StateChanges {
			return &agenterr.Error{Kind: agenterr.Conflict, Field: "id",
				Reason: fmt.Sprintf("changes to task %s were requested and its change has not been recorded again since: it is recorded when the agent's next run on it ends", id)}
		}
		if err := gate(c, set.Checks, o.Force); err != nil {
			return err
		}
		g := git{dir: c.GitDir}
		onto, err := g.rev(ctx, "refs/heads/"+c.BaseBranch)
		if err != nil {
			return &agenterr.Error{Kind: agenterr.Conflict, Field: "base_branch", Reason: fmt.Sprintf("the base branch %s is gone: nothing to land on", c.BaseBranch), Err: err}
		}
		wts, err := worktrees(ctx, g)
		if err != nil {
			return err
		}
		tip, conflicts, err := build(ctx, git{dir: mergeDir(wts, g.dir)}, c, strategy, onto, o.By, info.Task)
		if err != nil {
			return err
		}
		if len(conflicts) > 0 {
			return s.refuseConflict(ctx, dir, c, conflicts, o.By)
		}
		updated, err := land(ctx, g, wts, c.BaseBranch, onto, tip)
		if err != nil {
			return err
		}
		c.State, c.Conflict = StateLanded, nil
		c.Landed = &Landing{Strategy: strategy, Onto: onto, By: string(o.By), At: s.now().UTC(), Forced: o.Force && !checksPassed(c, set.Checks)}
		if tip != onto {
			c.Landed.Commit = tip
		}
		if err := save(dir, c); err != nil {
			return fmt.Errorf("the change landed on %s as %s, but its record could not be written (%w): run approve again to finish", c.BaseBranch, short(tip), err)
		}
		res.Updated = updated
		return s.finishLanding(ctx, c, o, &res)
	})
	if err == nil && !already {
		s.publish(res.Change, MoveLanded, fmt.Sprintf("on %s as %s (%s)", res.Change.BaseBranch, short(res.Change.Landed.Commit), res.Change.Landed.Strategy), string(o.By))
	}
	return res, err
}

// finishLanding moves the landed change's task to DONE, then the agent's
// branch to the new base, and drops the change's pin.
func (s *Service) finishLanding(ctx context.Context, c Change, o ApproveOptions, res *ApproveResult) error {
	l := c.Landed
	line := fmt.Sprintf("%s: landed on %s", s.stamp(), c.BaseBranch)
	switch {
	case l.Commit == "":
		line += ": the change made no difference to " + c.BaseBranch + ", nothing was committed"
	default:
		line += fmt.Sprintf(" as %s (%s of %s)", short(l.Commit), l.Strategy, fmt.Sprintf("%d %s", len(c.Commits), mdtext.Plural(len(c.Commits), "commit", "commits")))
	}
	if o.By != "" {
		line += " by " + o.By.Handle()
	}
	if l.Forced {
		line += "; its checks had not passed (forced)"
	}
	r, err := task.Review(ctx, s.ws, c.Task, task.ReviewNote{To: task.StatusDone, Reason: "landed on " + c.BaseBranch, Lines: []string{line}}, o.By, s.now())
	if err != nil {
		return fmt.Errorf("the change landed on %s, but task %s could not be moved to DONE (%w): run approve again to finish", c.BaseBranch, c.Task, err)
	}
	res.Change, res.Task = c, r.After
	newBase := l.Commit
	if newBase == "" {
		newBase = l.Onto
	}
	wt := git{dir: c.Worktree}
	if c.Remote != "" {
		res.Notes = append(res.Notes, fmt.Sprintf("%s is in the agent's Coder workspace: it starts its next task from the change it published", c.Branch))
	} else if _, err := os.Stat(c.Worktree); err != nil {
		res.Notes = append(res.Notes, fmt.Sprintf("the agent's worktree %s is gone: %s was not moved", c.Worktree, c.Branch))
	} else if err := moveBranch(ctx, wt, c.Branch, c.BaseBranch, c.Head, newBase); err != nil {
		res.Notes = append(res.Notes, fmt.Sprintf("%s was not moved to the new %s: %s", c.Branch, c.BaseBranch, agenterr.Of(err).Reason))
	} else {
		res.Reset = newBase
	}
	_, _ = git{dir: c.GitDir}.run(ctx, nil, "update-ref", "-d", PinPrefix+c.Task)
	return nil
}

// refuseConflict marks the change "conflict" with its files, says so in
// the task README, and returns the refusal.
func (s *Service) refuseConflict(ctx context.Context, dir string, c Change, files []string, by task.Actor) error {
	c.State, c.Conflict = StateConflict, files
	if err := save(dir, c); err != nil {
		return err
	}
	line := fmt.Sprintf("%s: landing refused: the change conflicts with %s in %s", s.stamp(), c.BaseBranch, listFiles(files))
	if by != "" {
		line += " (by " + string(by) + ")"
	}
	if _, err := task.Review(ctx, s.ws, c.Task, task.ReviewNote{Lines: []string{line}}, by, s.now()); err != nil {
		return err
	}
	s.publish(c, MoveConflict, strings.Join(files, ", "), string(by))
	return &agenterr.Error{Kind: agenterr.Conflict, Err: ErrConflict, Field: "id",
		Reason: fmt.Sprintf("task %s's change conflicts with %s in %s; nothing was changed: the task stays in REVIEW marked conflict; send it back to the agent to rebase (review changes)", c.Task, c.BaseBranch, listFiles(files))}
}

// gate refuses a change whose checks have not passed on its last commit,
// unless force.
func gate(c Change, checks []string, force bool) error {
	state := ChecksState(c, checks)
	if force || checksPassed(c, checks) {
		return nil
	}
	why := "have not run on its last commit"
	if state == ChecksFailed {
		var failed []string
		for _, x := range c.Checks.Results {
			if !x.Passed {
				failed = append(failed, fmt.Sprintf("%s (%s)", x.Command, x.Outcome()))
			}
		}
		why = "failed: " + strings.Join(failed, ", ")
	}
	return &agenterr.Error{Kind: agenterr.Refused, Err: ErrChecks, Field: "id", Override: "force",
		Reason: fmt.Sprintf("task %s's checks %s; run them (review check %s) once the change is fixed, or land it anyway", c.Task, why, c.Task)}
}

// checksPassed reports whether nothing gates the landing: the configured
// checks passed on the change's last commit, or none are configured.
func checksPassed(c Change, checks []string) bool {
	s := ChecksState(c, checks)
	return s == ChecksPassed || s == ChecksNone
}

// checkout is a worktree and the commit it has checked out.
type checkout struct {
	path, branch string
	bare         bool
}

// worktrees lists the repository's worktrees (the main one first).
func worktrees(ctx context.Context, g git) ([]checkout, error) {
	b, err := g.run(ctx, nil, "worktree", "list", "--porcelain", "-z")
	if err != nil {
		return nil, err
	}
	var out []checkout
	for _, f := range splitNUL(b) {
		switch k, v, _ := strings.Cut(f, " "); k {
		case "worktree":
			out = append(out, checkout{path: v})
		case "branch":
			if len(out) > 0 {
				out[len(out)-1].branch = v
			}
		case "bare":
			if len(out) > 0 {
				out[len(out)-1].bare = true
			}
		}
	}
	return out, nil
}

// mergeDir is where merges run: the repository's main worktree, so that
// its .gitattributes (merge drivers, binary files) apply as they would to
// a person's git merge; the git directory itself for a bare repository.
func mergeDir(wts []checkout, gitDir string) string {
	if len(wts) > 0 && !wts[0].bare {
		if _, err := os.Stat(wts[0].path); err == nil {
			return wts[0].path
		}
	}
	return gitDir
}

// land moves the base branch from onto to tip (a compare-and-set) and
// brings every worktree of wts that has it checked out along, refusing first,
// naming the files, when one has local changes the move would touch. It
// returns the worktrees it updated. When a worktree cannot be brought
// along after all, the base branch goes back and the error says why.
func land(ctx context.Context, g git, wts []checkout, baseBranch, onto, tip string) ([]string, error) {
	if tip == onto {
		return nil, nil
	}
	ref := "refs/heads/" + baseBranch
	var out []git
	touched, err := g.changedPaths(ctx, onto, tip)
	if err != nil {
		return nil, err
	}
	for _, w := range wts {
		if w.branch != ref || w.bare {
			continue
		}
		if _, err := os.Stat(w.path); err != nil {
			continue // a worktree whose folder is gone (git worktree prune)
		}
		wg := git{dir: w.path}
		dirty, err := wg.dirty(ctx)
		if err != nil {
			return nil, err
		}
		if in := intersect(dirty, touched); len(in) > 0 {
			return nil, &agenterr.Error{Kind: agenterr.Conflict, Err: ErrLocalChanges, Field: "id",
				Reason: fmt.Sprintf("%s is checked out in %s with local changes to files the change touches: %s; commit or stash them there, then approve again; nothing was changed", baseBranch, w.path, listFiles(in))}
		}
		out = append(out, wg)
	}
	if err := g.updateRef(ctx, ref, tip, onto, "agentinfra: land "+short(tip)); err != nil {
		return nil, &agenterr.Error{Kind: agenterr.Conflict, Field: "id", Reason: fmt.Sprintf("%s moved while the change was landing; nothing was changed: approve again", baseBranch), Err: err}
	}
	var updated []string
	for i, wg := range out {
		if _, err := wg.run(ctx, nil, "read-tree", "-m", "-u", onto, tip); err != nil {
			// A file changed in the moment between the check and now:
			// everything goes back.
			bg := context.WithoutCancel(ctx)
			for _, done := range out[:i] {
				_, _ = done.run(bg, nil, "read-tree", "-m", "-u", tip, onto)
			}
			back := g.updateRef(bg, ref, onto, tip, "agentinfra: landing undone")
			e := &agenterr.Error{Kind: agenterr.Conflict, Err: ErrLocalChanges, Field: "id",
				Reason: fmt.Sprintf("%s is checked out in %s, whose files changed while the change was landing (%s); nothing was changed: approve again", baseBranch, wg.dir, gitSaid(err))}
			if back != nil {
				e.Reason = fmt.Sprintf("%s is checked out in %s, whose files could not be updated (%s), and %s could not be moved back to %s (%v): check it with git status there", baseBranch, wg.dir, gitSaid(err), baseBranch, short(onto), back)
			}
			return nil, e
		}
		updated = append(updated, wg.dir)
	}
	return updated, nil
}

// gitSaid is what a failed git command said.
func gitSaid(err error) string {
	var ge *gitError
	if errors.As(err, &ge) {
		return strings.Join(strings.Fields(ge.stderr), " ")
	}
	return err.Error()
}

func intersect(a, b []string) []string {
	set := make(map[string]bool, len(b))
	for _, x := range b {
		set[x] = true
	}
	var out []string
	for _, x := range a {
		if set[x] {
			out = append(out, x)
		}
	}
	return out
}
