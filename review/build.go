package review

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/task"
)

// build makes the commit the base branch moves to when change c lands on
// onto with strategy, writing only objects (no ref, no file moves): git
// merge-tree --write-tree merges, commit-tree commits. It returns the new
// tip (onto itself when the change makes no difference), or the files in
// conflict.
//
//   - squash: one commit on onto, with the merge's tree, authored by the
//     agent, listing the change's commits.
//   - merge: a merge commit of onto and the change's last commit.
//   - rebase: the change's commits (its first-parent line, merges left
//     out) one by one on onto,
//     each with its author and message; commit i's tree is git's merge of
//     onto with the change up to commit i, so every commit is the base plus
//     the work so far. A commit that adds nothing is dropped, as git rebase
//     drops one that becomes empty.
func build(ctx context.Context, g git, c Change, strategy, onto string, by task.Actor, t matrix.Task) (tip string, conflicts []string, err error) {
	tree, conflicts, err := mergeTree(ctx, g, onto, c.Head)
	if err != nil || len(conflicts) > 0 {
		return "", conflicts, err
	}
	ontoTree, err := g.out(ctx, "rev-parse", onto+"^{tree}")
	if err != nil {
		return "", nil, err
	}
	if tree == ontoTree {
		return onto, nil, nil // nothing to land: the base has it all
	}
	trailers := trailersOf(c, by)
	switch strategy {
	case "squash":
		var b strings.Builder
		fmt.Fprintf(&b, "%s: %s\n\n", c.Task, Title(t.Description))
		fmt.Fprintf(&b, "The change of %s on %s (%s):\n", c.Agent, c.Branch, fmt.Sprintf("%d %s", len(c.Commits), mdtext.Plural(len(c.Commits), "commit", "commits")))
		for _, cm := range c.Commits {
			fmt.Fprintf(&b, "- %s %s\n", short(cm.Hash), cm.Subject)
		}
		b.WriteString("\n" + trailers)
		return commitTree(ctx, git{dir: g.dir, env: identity(c.Agent, false)}, tree, b.String(), onto)
	case "merge":
		msg := fmt.Sprintf("Merge %s: %s: %s\n\n%s", c.Branch, c.Task, Title(t.Description), trailers)
		return commitTree(ctx, g, tree, msg, onto, c.Head)
	}
	return rebase(ctx, g, c, onto, ontoTree)
}

// rebase replays the change's commits on onto (see build).
func rebase(ctx context.Context, g git, c Change, onto, prevTree string) (string, []string, error) {
	// The first-parent line, so that each commit's history holds the one
	// before; the commits onto has already (a base the agent merged in)
	// are not the change's.
	b, err := g.run(ctx, nil, "log", "-z", "--reverse", "--first-parent", "--no-merges", "--date=raw", "--format=%H%x01%an%x01%ae%x01%ad%x01%B", onto+".."+c.Head)
	if err != nil {
		return "", nil, err
	}
	tip := onto
	for _, rec := range splitNUL(b) {
		f := strings.SplitN(rec, "\x01", 5)
		if len(f) != 5 {
			continue
		}
		tree, conflicts, err := mergeTree(ctx, g, onto, f[0])
		if err != nil || len(conflicts) > 0 {
			return "", conflicts, err
		}
		if tree == prevTree {
			continue
		}
		author := git{dir: g.dir, env: []string{"GIT_AUTHOR_NAME=" + f[1], "GIT_AUTHOR_EMAIL=" + f[2], "GIT_AUTHOR_DATE=" + f[3]}}
		next, _, err := commitTree(ctx, author, tree, f[4], tip)
		if err != nil {
			return "", nil, err
		}
		tip, prevTree = next, tree
	}
	// The change's last tree is the squash's: a history whose merges held
	// part of the work ends with it all the same.
	final, conflicts, err := mergeTree(ctx, g, onto, c.Head)
	if err != nil || len(conflicts) > 0 {
		return "", conflicts, err
	}
	if final != prevTree {
		msg := fmt.Sprintf("%s: the rest of %s\n\n%s", c.Task, c.Branch, trailersOf(c, ""))
		return commitTree(ctx, git{dir: g.dir, env: identity(c.Agent, false)}, final, msg, tip)
	}
	return tip, nil, nil
}

// mergeTree is git's merge of two commits (their merge base found by git),
// written as a tree without touching any worktree, index or ref: the tree,
// or the paths in conflict.
func mergeTree(ctx context.Context, g git, ours, theirs string) (string, []string, error) {
	b, err := g.run(ctx, nil, "merge-tree", "--write-tree", "--name-only", "-z", "--no-messages", ours, theirs)
	out := splitNUL(b)
	switch {
	case err == nil && len(out) > 0:
		return out[0], nil, nil
	case exitCode(err) == 1 && len(out) > 0:
		files := slices.Compact(slices.Sorted(slices.Values(out[1:])))
		return "", files, nil
	case err == nil:
		return "", nil, fmt.Errorf("git merge-tree printed no tree")
	}
	return "", nil, err
}

// commitTree commits tree with msg on parents; the committer is git's
// configured identity (the person landing), the author g's when it sets
// one.
func commitTree(ctx context.Context, g git, tree, msg string, parents ...string) (string, []string, error) {
	args := []string{"commit-tree", tree}
	for _, p := range parents {
		args = append(args, "-p", p)
	}
	out, err := g.run(ctx, strings.NewReader(msg), append(args, "-F", "-")...)
	if err != nil {
		return "", nil, err
	}
	return strings.TrimSpace(string(out)), nil, nil
}

// trailersOf are the trailers of a landing's commits.
func trailersOf(c Change, by task.Actor) string {
	t := "Agentinfra-Task: " + c.Task + "\n"
	if c.Run != "" {
		t += "Agentinfra-Run: " + c.Run + "\n"
	}
	if by != "" {
		t += "Agentinfra-Approved-By: " + string(by) + "\n"
	}
	return t
}
