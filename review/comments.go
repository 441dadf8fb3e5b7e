package review

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/task"
)

// CommentInput is one comment of a request for changes: on a line of a
// file (File and Line), on a file (File), or on the whole change.
type CommentInput struct {
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	Text string `json:"text"`
}

// ChangesResult is what a request for changes did.
type ChangesResult struct {
	Change Change      `json:"change"`
	Task   matrix.Task `json:"task"`
	// Prompt is what the agent is sent (Prompt).
	Prompt string `json:"prompt"`
	// Warnings did not stop the request (a comment on a file the change
	// does not touch).
	Warnings []string `json:"warnings,omitempty"`
	// Delivery says whether the agent was started on it, or why it waits
	// (when the service has a fleet).
	Delivery *Delivery `json:"delivery,omitempty"`
}

// RequestChanges sends task id's change back to its agent: the comments
// are kept with the change and in the task README's Review section, and
// the task goes from REVIEW to IN_PROGRESS (by is the reviewer, the same
// agent still holds it). The result's Prompt is what the agent is to be
// sent. A bad comment (empty, a path outside the repository, a line
// without a file) is refused and nothing is written.
func (s *Service) RequestChanges(ctx context.Context, id string, comments []CommentInput, by task.Actor) (ChangesResult, error) {
	if len(comments) == 0 {
		return ChangesResult{}, &agenterr.Error{Kind: agenterr.Invalid, Field: "comment", Reason: "say what to change: a request for changes needs at least one comment"}
	}
	clean := make([]CommentInput, len(comments))
	for i, in := range comments {
		var err error
		if clean[i], err = checkComment(in); err != nil {
			return ChangesResult{}, err
		}
	}
	if by == "" {
		by = task.ActorFrom(ctx)
	}
	c, dir, err := s.load(ctx, id)
	if err != nil {
		return ChangesResult{}, err
	}
	var res ChangesResult
	err = withLock(ctx, c.GitDir, func() error {
		prev, err := readChange(filepath.Join(dir, FileName))
		if err != nil {
			return err
		}
		res, err = s.sendBack(ctx, dir, prev, clean, by, nil)
		return err
	})
	if err != nil {
		return res, err
	}
	s.publish(res.Change, MoveChanges, fmt.Sprintf("%d %s", len(clean), mdtext.Plural(len(clean), "comment", "comments")), string(by))
	if s.fleet != nil {
		res.Delivery = s.Deliver(ctx, res.Change.Agent)
	}
	return res, nil
}

// sendBack adds the comments to the change in dir (read under the lock as
// prev) and sends it back: the change is changes_requested, the task back
// IN_PROGRESS with the README's lines (the reviewer's verdict's first,
// when it is a reviewer agent's). Called under the review lock; nothing is
// written when it fails.
func (s *Service) sendBack(ctx context.Context, dir string, prev Change, clean []CommentInput, by task.Actor, v *Verdict) (ChangesResult, error) {
	var res ChangesResult
	id := prev.Task
	if prev.State != StateReview && prev.State != StateConflict {
		return res, &agenterr.Error{Kind: agenterr.Conflict, Err: task.ErrNotInReview, Field: "id", Reason: fmt.Sprintf("task %s's change is %s; only a change in review can be sent back", id, strings.ReplaceAll(prev.State, "_", " "))}
	}
	touched := map[string]bool{}
	if st, err := fileStats(ctx, git{dir: prev.GitDir}, prev.Base, prev.Head); err == nil {
		for _, f := range st {
			touched[f.Path] = true
		}
	}
	next := prev
	now := s.now()
	next.Comments = append([]Comment{}, prev.Comments...)
	for _, in := range clean {
		next.Comments = append(next.Comments, Comment{Round: prev.Round, By: string(by), At: now.UTC(), File: in.File, Line: in.Line, Text: in.Text})
		if in.File != "" && !touched[in.File] {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s is not a file the change touches", in.File))
		}
	}
	next.State, next.Sent = StateChanges, nil
	var lines []string
	if v != nil {
		next.Verdicts = append(append([]Verdict{}, prev.Verdicts...), *v)
		lines = append(lines, readmeVerdict(s.stamp(), *v))
	}
	lines = append(lines, readmeRequest(s.stamp(), by, next))
	if err := save(dir, next); err != nil {
		return res, err
	}
	r, err := task.Review(ctx, s.ws, id, task.ReviewNote{To: task.StatusInProgress, Reason: "changes requested", Lines: lines}, by, now)
	if err != nil {
		_ = save(dir, prev) // the task did not move: neither does the change
		return res, err
	}
	res.Change, res.Task = next, r.After
	res.Prompt = Prompt(next, r.After)
	return res, nil
}

// checkComment refuses a comment with no text, a path that is not a
// plain relative path inside the repository, or a line without a file.
func checkComment(in CommentInput) (CommentInput, error) {
	in.Text = strings.TrimSpace(in.Text)
	if in.Text == "" {
		return in, &agenterr.Error{Kind: agenterr.Invalid, Field: "comment", Reason: "a comment's text is empty"}
	}
	if in.Line < 0 || in.Line > 0 && in.File == "" {
		return in, &agenterr.Error{Kind: agenterr.Invalid, Field: "line", Value: fmt.Sprint(in.Line), Reason: "a line is a number from 1, on a file named with it"}
	}
	if in.File != "" {
		p := filepath.ToSlash(in.File)
		clean := path.Clean(p)
		if path.IsAbs(p) || clean == "." || clean == ".." || strings.HasPrefix(clean, "../") || strings.ContainsAny(p, "\x00\n") {
			return in, &agenterr.Error{Kind: agenterr.Invalid, Field: "file", Value: in.File, Reason: "a file is named by its path in the repository, e.g. review/land.go"}
		}
		in.File = clean
	}
	return in, nil
}

// readmeRequest is the Review section's item of a request for changes.
func readmeRequest(stamp string, by task.Actor, c Change) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: changes requested (round %d)", stamp, c.Round)
	if by != "" {
		b.WriteString(" by " + by.Handle())
	}
	b.WriteString(":")
	for _, cm := range roundComments(c) {
		b.WriteString("\n- ")
		if w := cm.Where(); w != "" {
			b.WriteString("`" + w + "`: ")
		}
		b.WriteString(strings.ReplaceAll(cm.Text, "\n", "\n  "))
	}
	return b.String()
}

// roundComments are the comments of the change's latest round of review.
func roundComments(c Change) []Comment {
	var out []Comment
	for _, cm := range c.Comments {
		if cm.Round == c.Round {
			out = append(out, cm)
		}
	}
	return out
}

// Prompt is what an agent whose change was sent back is told: the task,
// where its change is, every comment of the latest round with its file and
// line, and, when the last landing conflicted, the files to rebase. The
// fleet sends it as the prompt of the agent's next run on the task.
func Prompt(c Change, t matrix.Task) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Your change for task %s (%s) was reviewed, and changes are requested", c.Task, Title(t.Description))
	if cs := roundComments(c); len(cs) > 0 && cs[0].By != "" {
		b.WriteString(" by " + task.Actor(cs[0].By).Handle())
	}
	fmt.Fprintf(&b, ". The change is on your branch %s: %s from %s at %s.\n\n", c.Branch, fmt.Sprintf("%d %s", len(c.Commits), mdtext.Plural(len(c.Commits), "commit", "commits")), c.BaseBranch, short(c.Base))
	b.WriteString("Address every comment below in your worktree and commit your work; when you are done, the task goes back to review.\n\n")
	for i, cm := range roundComments(c) {
		where := cm.Where()
		if where == "" {
			where = "the whole change"
		}
		fmt.Fprintf(&b, "%d. %s: %s\n", i+1, where, strings.ReplaceAll(cm.Text, "\n", "\n   "))
	}
	if len(c.Conflict) > 0 {
		fmt.Fprintf(&b, "\nThe change conflicts with %s in %s: rebase your branch onto %s (git rebase %s), resolve the conflicts, and commit.\n",
			c.BaseBranch, strings.Join(c.Conflict, ", "), c.BaseBranch, c.BaseBranch)
	}
	return b.String()
}
