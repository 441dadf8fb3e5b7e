package review

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/task"
)

// RecordInput is what the fleet knows when a run on a matrix task ends
// completed.
type RecordInput struct {
	// Task is the matrix task's ID.
	Task string
	// Agent is the agent's name ("papi"), Run its run ("papi-3").
	Agent string
	Run   string
	// Worktree is the agent's worktree, on Branch (agent/papi).
	Worktree string
	Branch   string
	// BaseBranch is the branch the change lands on (the agent's base).
	BaseBranch string
	// Start is the commit the task's work started from (PrepareBranch's
	// result); "" is the merge base of the branch and the base branch.
	Start string
	// Summary and FinalMessage are the run's, shown by review show.
	Summary      string
	FinalMessage string
	// Remote, for a change made in a Coder workspace, is the remote its
	// host pushed Branch to (Publish): Worktree is then any checkout of
	// this machine's clone, the branch is fetched from Remote into the
	// change's pin, and must be at Head when Head is set.
	Remote string
	Head   string
}

// Record makes the agent's work on a task one reviewable change: whatever
// the agent left uncommitted in its worktree is committed on its branch
// (message "ID: description", the agent as author and committer, the run
// in an Agentinfra-Run trailer; the agent's own commits are kept as they
// are), the change's last commit is pinned (PinPrefix+ID), and the record
// (change.json in the task folder, which is made when the task has none)
// says its branch, base and commits. Recording a change again (after a
// request for changes) keeps its comments and starts a new round; its
// checks must run again.
func (s *Service) Record(ctx context.Context, in RecordInput) (Change, error) {
	if err := requireGit(); err != nil {
		return Change{}, err
	}
	for _, f := range []struct{ name, v string }{{"task", in.Task}, {"agent", in.Agent}, {"worktree", in.Worktree}, {"branch", in.Branch}, {"base_branch", in.BaseBranch}} {
		if strings.TrimSpace(f.v) == "" {
			return Change{}, &agenterr.Error{Kind: agenterr.Invalid, Field: f.name, Reason: "a change is recorded with its task, agent, worktree, branch and base branch: " + f.name + " is empty"}
		}
	}
	info, err := task.ShowTask(ctx, s.ws, in.Task)
	if err != nil {
		return Change{}, err
	}
	dir := info.Dir
	if dir == "" {
		if _, dir, err = task.ScaffoldTask(ctx, s.ws, in.Task, task.ScaffoldOptions{}, s.now()); err != nil {
			return Change{}, err
		}
	}
	g, gitDir, err := worktreeGit(ctx, in.Worktree)
	if err != nil {
		return Change{}, err
	}
	if in.Remote == "" {
		if err := onBranch(ctx, g, in.Branch); err != nil {
			return Change{}, err
		}
	}
	if _, err := g.rev(ctx, "refs/heads/"+in.BaseBranch); err != nil {
		return Change{}, &agenterr.Error{Kind: agenterr.Invalid, Field: "base_branch", Value: in.BaseBranch, Reason: "the base must be a branch of the repository, for the change to land on"}
	}

	var c Change
	err = withLock(ctx, gitDir, func() error {
		prev, err := readChange(filepath.Join(dir, FileName))
		switch {
		case errors.Is(err, fs.ErrNotExist) || err == nil && prev.State == StateLanded:
			prev = Change{} // a new change
		case err != nil:
			return err
		}
		var committed, head string
		if in.Remote != "" {
			head, err = fetchChange(ctx, g, in)
		} else {
			if committed, err = commitLeftovers(ctx, g, in.Task+": "+Title(info.Task.Description), in.Run, in.Agent, in.Worktree, in.Branch); err != nil {
				return err
			}
			head, err = g.rev(ctx, "refs/heads/"+in.Branch)
		}
		if err != nil {
			return err
		}
		base, err := s.startOf(ctx, g, in, prev, head)
		if err != nil {
			return err
		}
		commits, err := commitsOf(ctx, g, base, head)
		if err != nil {
			return err
		}
		if _, err := g.run(ctx, nil, "update-ref", "-m", "agentinfra: change of task "+in.Task, PinPrefix+in.Task, head); err != nil {
			return err
		}
		wt := g.dir
		if in.Remote != "" {
			wt = "" // the agent's worktree is in its workspace
		}
		c = Change{
			Task: in.Task, Agent: in.Agent, Run: in.Run, Worktree: wt, GitDir: gitDir, Remote: in.Remote,
			Branch: in.Branch, BaseBranch: in.BaseBranch, Base: base, Head: head, Commits: commits,
			Committed: committed, RecordedAt: s.now().UTC(), Round: prev.Round + 1,
			Summary: in.Summary, FinalMessage: in.FinalMessage, State: StateReview, Comments: prev.Comments, Verdicts: prev.Verdicts, Sent: prev.Sent,
		}
		if err := save(dir, c); err != nil {
			return err
		}
		files, add, del, _ := stat(ctx, git{dir: gitDir}, base, head)
		line := fmt.Sprintf("%s: change recorded (round %d)", s.stamp(), c.Round)
		if in.Run != "" {
			line += " at the end of run " + in.Run
		}
		line += fmt.Sprintf(": %s on %s from %s at %s, %d file(s) +%d −%d", fmt.Sprintf("%d %s", len(commits), mdtext.Plural(len(commits), "commit", "commits")), in.Branch, in.BaseBranch, short(base), files, add, del)
		_, err = task.Review(ctx, s.ws, in.Task, task.ReviewNote{Lines: []string{line}}, task.AgentActor(in.Agent), s.now())
		return err
	})
	if err == nil {
		s.publish(c, MoveRecorded, fmt.Sprintf("round %d: %d %s", c.Round, len(c.Commits), mdtext.Plural(len(c.Commits), "commit", "commits")), string(task.AgentActor(in.Agent)))
	}
	return c, err
}

// commitLeftovers commits what the agent left uncommitted in its worktree
// on its branch, and returns the commit ("" when there was nothing). The
// commit is made with plumbing (no hooks, no signing: the agent's
// worktree is not the place for the person's commit rituals), and the
// branch moves with a compare-and-set.
func commitLeftovers(ctx context.Context, g git, subject, run, agent, worktree, branch string) (string, error) {
	if conflicted, err := g.list(ctx, "diff", "--name-only", "-z", "--diff-filter=U"); err != nil {
		return "", err
	} else if len(conflicted) > 0 {
		return "", &agenterr.Error{Kind: agenterr.Conflict, Field: "worktree",
			Reason: fmt.Sprintf("the worktree %s has unresolved merge conflicts in %s: resolve them there (the agent can, with review changes), then record the change again", worktree, listFiles(conflicted))}
	}
	dirty, err := g.dirty(ctx)
	if err != nil || len(dirty) == 0 {
		return "", err
	}
	parent, err := g.rev(ctx, "refs/heads/"+branch)
	if err != nil {
		return "", err
	}
	if _, err := g.run(ctx, nil, "add", "--all"); err != nil {
		return "", err
	}
	tree, err := g.out(ctx, "write-tree")
	if err != nil {
		return "", err
	}
	if same, _ := g.out(ctx, "rev-parse", parent+"^{tree}"); same == tree {
		return "", nil // only changes git does not keep (modes it ignores)
	}
	msg := subject + "\n"
	if run != "" {
		msg += "\nAgentinfra-Run: " + run + "\n"
	}
	ag := git{dir: g.dir, env: identity(agent, true)}
	commit, err := ag.run(ctx, strings.NewReader(msg), "commit-tree", "--no-gpg-sign", tree, "-p", parent, "-F", "-")
	if err != nil {
		return "", err
	}
	hash := strings.TrimSpace(string(commit))
	if err := g.updateRef(ctx, "refs/heads/"+branch, hash, parent, "agentinfra: "+firstLine(msg)); err != nil {
		return "", err
	}
	return hash, nil
}

// startOf is the commit the change starts from: for a change sent back
// and continued on the same branch, its previous round's base while it is
// in the branch's history (the run started at the previous round's head,
// but the change is the whole work: both rounds' commits); else the given
// start when it is in the branch's history; else the merge base of the
// branch and the base branch.
func (s *Service) startOf(ctx context.Context, g git, in RecordInput, prev Change, head string) (string, error) {
	cands := []string{in.Start, prev.Base}
	if prev.Branch == in.Branch {
		cands = []string{prev.Base, in.Start}
	}
	for _, cand := range cands {
		if cand == "" {
			continue
		}
		if ok, err := g.isAncestor(ctx, cand, head); err == nil && ok {
			return g.rev(ctx, cand)
		}
	}
	base, err := g.out(ctx, "merge-base", "refs/heads/"+in.BaseBranch, head)
	if err != nil {
		return "", &agenterr.Error{Kind: agenterr.Conflict, Field: "branch",
			Reason: fmt.Sprintf("%s and %s have no commit in common: the change has no base to land on", in.Branch, in.BaseBranch), Err: err}
	}
	return base, nil
}

// commitsOf lists base..head, oldest first.
func commitsOf(ctx context.Context, g git, base, head string) ([]Commit, error) {
	b, err := g.run(ctx, nil, "log", "-z", "--reverse", "--format=%H%x01%s%x01%an <%ae>", base+".."+head)
	if err != nil {
		return nil, err
	}
	out := []Commit{}
	for _, rec := range splitNUL(b) {
		f := strings.SplitN(rec, "\x01", 3)
		if len(f) == 3 {
			out = append(out, Commit{Hash: f[0], Subject: f[1], Author: f[2]})
		}
	}
	return out, nil
}

// onBranch refuses a worktree whose HEAD is not branch.
func onBranch(ctx context.Context, g git, branch string) error {
	cur, err := g.out(ctx, "symbolic-ref", "-q", "HEAD")
	if err != nil || cur != "refs/heads/"+branch {
		at := strings.TrimPrefix(cur, "refs/heads/")
		if at == "" {
			at = "a detached HEAD"
		}
		return &agenterr.Error{Kind: agenterr.Conflict, Field: "branch",
			Reason: fmt.Sprintf("the worktree %s is on %s, not %s: check out %s there first", g.dir, at, branch, branch)}
	}
	return nil
}

// identity is the git environment that makes agent the author (and with
// committer, the committer too) of the commits made with it. The address
// is in the .invalid domain: no mail is ever meant to reach it.
func identity(agent string, committer bool) []string {
	name := strings.TrimPrefix(agent, "@")
	email := strings.ToLower(name) + "@agentinfra.invalid"
	env := []string{"GIT_AUTHOR_NAME=" + name, "GIT_AUTHOR_EMAIL=" + email}
	if committer {
		env = append(env, "GIT_COMMITTER_NAME="+name, "GIT_COMMITTER_EMAIL="+email)
	}
	return env
}

// requireGit refuses a git too old for merge-tree --write-tree (2.38).
// It asks git once per process.
func requireGit() error {
	gitChecked.Do(func() { gitTooOld = checkGit(context.Background()) })
	return gitTooOld
}

var (
	gitChecked sync.Once
	gitTooOld  error
)

func checkGit(ctx context.Context) error {
	out, err := git{dir: os.TempDir()}.out(ctx, "version")
	if err != nil {
		return &agenterr.Error{Kind: agenterr.Unavailable, Reason: "git is needed to review and land changes, and it did not run: install git 2.38 or later", Err: err}
	}
	var major, minor int
	if _, err := fmt.Sscanf(out, "git version %d.%d", &major, &minor); err == nil && (major < 2 || major == 2 && minor < 38) {
		return &agenterr.Error{Kind: agenterr.Unavailable, Reason: fmt.Sprintf("%s is too old: landing merges with git merge-tree --write-tree, which git 2.38 brought; upgrade git", out)}
	}
	return nil
}

// Title is a task description's first line: a commit's subject.
func Title(desc string) string {
	for _, sep := range []string{"<br>", "<br/>", "<br />", "\n"} {
		desc, _, _ = strings.Cut(desc, sep)
	}
	return strings.TrimSpace(desc)
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// short is a commit's abbreviation in messages.
func short(h string) string {
	if len(h) > 10 {
		return h[:10]
	}
	return h
}

// listFiles names files in a message: the first ten, then how many more.
func listFiles(files []string) string {
	if len(files) <= 10 {
		return strings.Join(files, ", ")
	}
	return strings.Join(files[:10], ", ") + fmt.Sprintf(" and %d more", len(files)-10)
}

// stamp is the time of a Review section line.
func (s *Service) stamp() string { return s.now().Format("2006-01-02 15:04") }
