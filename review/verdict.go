package review

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/task"
)

// The decisions of a reviewer agent.
const (
	// DecisionApprove: the change can land as it is (a person lands it,
	// unless review.auto_land).
	DecisionApprove = "approve"
	// DecisionChanges: the agent must address the comments first; the
	// change goes back to it.
	DecisionChanges = "changes"
	// DecisionNone: the reviewer's final message held no verdict (or its
	// run failed); a person decides.
	DecisionNone = "none"
)

// MaxReviewerRounds bounds how many times a reviewer agent sends one
// change back on its own: past it, its "changes" is kept as comments and a
// person decides, so that an agent and a reviewer that never agree do not
// loop.
const MaxReviewerRounds = 3

// Verdict is what a reviewer agent said of one round of a change.
type Verdict struct {
	Round    int       `json:"round"`
	By       string    `json:"by"`
	Run      string    `json:"run,omitempty"`
	Decision string    `json:"decision"`
	Summary  string    `json:"summary,omitempty"`
	At       time.Time `json:"at"`
}

// LastVerdict is the reviewer's verdict on the change's current round
// (nil when it has none yet).
func (c Change) LastVerdict() *Verdict {
	if n := len(c.Verdicts); n > 0 && c.Verdicts[n-1].Round == c.Round {
		return &c.Verdicts[n-1]
	}
	return nil
}

// reviewerSendBacks counts the rounds a reviewer agent sent back.
func (c Change) reviewerSendBacks() int {
	n := 0
	for _, v := range c.Verdicts {
		if v.Decision == DecisionChanges {
			n++
		}
	}
	return n
}

// VerdictInput is a reviewer's verdict as its final message gives it: the
// last fenced JSON block of the message, in this shape:
//
//	{"verdict": "approve" | "changes",
//	 "summary": "one sentence",
//	 "comments": [{"file": "fetch.go", "line": 42, "text": "return the error"}]}
type VerdictInput struct {
	Decision string         `json:"verdict"`
	Summary  string         `json:"summary,omitempty"`
	Comments []CommentInput `json:"comments,omitempty"`
}

// fence finds the fenced code blocks of a Markdown message.
var fence = regexp.MustCompile("(?s)```[a-zA-Z]*[ \t]*\n(.*?)\n[ \t]*```")

// ParseVerdict reads a reviewer's final message: the last fenced block
// that is a JSON object with a verdict of approve or changes (case aside)
// is the verdict. ok is false when there is none.
func ParseVerdict(message string) (v VerdictInput, ok bool) {
	blocks := fence.FindAllStringSubmatch(message, -1)
	for i := len(blocks) - 1; i >= 0; i-- {
		var in VerdictInput
		d := json.NewDecoder(strings.NewReader(blocks[i][1]))
		if err := d.Decode(&in); err != nil {
			continue
		}
		in.Decision = strings.ToLower(strings.TrimSpace(in.Decision))
		if in.Decision == DecisionApprove || in.Decision == DecisionChanges {
			return in, true
		}
	}
	return VerdictInput{}, false
}

// maxPromptDiff bounds the diff a reviewer's prompt carries; past it, the
// prompt says how to read the rest.
const maxPromptDiff = 96 << 10

// ReviewerPrompt is what the reviewer agent is told: the task, the change
// (its commits, its checks, git's diff against its base) and the verdict's
// shape (VerdictInput).
func (s *Service) ReviewerPrompt(ctx context.Context, id string) (string, error) {
	d, err := s.Show(ctx, id)
	if err != nil {
		return "", err
	}
	c := d.Change
	var diff bytes.Buffer
	if err := s.Diff(ctx, id, &diff, DiffOptions{}); err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "You are the independent reviewer of the change agent @%s made for task %s. Do not change any file and do not commit: read the change, judge whether it does what the task asks, correctly and well, and give your verdict.\n\n", c.Agent, c.Task)
	fmt.Fprintf(&b, "## The task\n\n%s: %s\n\n", d.Task.ID, strings.ReplaceAll(d.Task.Description, "<br>", "\n"))
	fmt.Fprintf(&b, "## The change\n\nBranch %s, %d %s from %s at %s (round %d), %d %s changed, +%d −%d. Checks: %s.\n",
		c.Branch, len(c.Commits), mdtext.Plural(len(c.Commits), "commit", "commits"), c.BaseBranch, short(c.Base), c.Round,
		d.Files, mdtext.Plural(d.Files, "file", "files"), d.Added, d.Deleted, d.Checks)
	for _, cm := range c.Commits {
		fmt.Fprintf(&b, "- %s %s\n", short(cm.Hash), cm.Subject)
	}
	if c.FinalMessage != "" {
		fmt.Fprintf(&b, "\nThe agent's final message:\n\n%s\n", mdtext.Shorten(c.FinalMessage, 2000))
	}
	patch := diff.String()
	if len(patch) > maxPromptDiff {
		patch = patch[:maxPromptDiff] + fmt.Sprintf("\n… (cut: the whole diff is `git diff %s %s` in the repository)\n", short(c.Base), short(c.Head))
	}
	fmt.Fprintf(&b, "\n```diff\n%s```\n\n", patch)
	b.WriteString("## Your verdict\n\nEnd your answer with one fenced JSON block, exactly in this shape:\n\n")
	b.WriteString("```json\n{\"verdict\": \"approve\", \"summary\": \"one sentence\", \"comments\": [{\"file\": \"path/in/the/repo.go\", \"line\": 42, \"text\": \"what to change and why\"}]}\n```\n\n")
	b.WriteString("verdict is \"approve\" (it can land as it is) or \"changes\" (the agent must address your comments first). A comment's file and line are those of the new version; leave them out for a comment on the whole change. Comments may be empty when you approve.\n")
	return b.String(), nil
}

// VerdictResult is what recording a reviewer's verdict did.
type VerdictResult struct {
	Change  Change  `json:"change"`
	Verdict Verdict `json:"verdict"`
	// SentBack: the change went back to its agent (a "changes" verdict
	// within MaxReviewerRounds).
	SentBack bool `json:"sent_back,omitempty"`
	// Landed is the landing of an approved change (review.auto_land).
	Landed *ApproveResult `json:"landed,omitempty"`
	// Notes say what was not done and why (an auto-landing refused).
	Notes []string `json:"notes,omitempty"`
}

// RecordVerdict records what reviewer agent (its run run) said of task
// id's change in its final message (ParseVerdict; failed is why its run
// did not complete, "" when it did): the comments are kept with the
// change (by @agent), the verdict in change.json and the README's Review
// section. A "changes" verdict sends the change back to its agent (as a
// person's request would) up to MaxReviewerRounds; an "approve" lands it
// when review.auto_land is set and its checks passed; a message with no
// verdict is a comment saying so, and a person decides. A verdict on a
// round the change has left (recorded again, sent back or landed since)
// is refused (Conflict) and changes nothing.
func (s *Service) RecordVerdict(ctx context.Context, id, agent, run, message, failed string) (VerdictResult, error) {
	set, err := s.settings()
	if err != nil {
		return VerdictResult{}, err
	}
	in, ok := ParseVerdict(message)
	switch {
	case failed != "":
		in = VerdictInput{Decision: DecisionNone, Comments: []CommentInput{{Text: "the reviewer gave no verdict: its run did not complete (" + failed + ")"}}}
	case !ok:
		in = VerdictInput{Decision: DecisionNone, Comments: []CommentInput{{Text: "the reviewer gave no verdict (its final message had no JSON verdict block)"}}}
	}
	clean := make([]CommentInput, 0, len(in.Comments))
	for _, cm := range in.Comments {
		c, err := checkComment(cm)
		if err != nil && strings.TrimSpace(cm.Text) != "" {
			// A place the service cannot take (a path outside the
			// repository): the text is kept, on the whole change.
			c = CommentInput{Text: strings.TrimSpace(fmt.Sprintf("%s:%d: %s", cm.File, cm.Line, cm.Text))}
		} else if err != nil {
			continue
		}
		clean = append(clean, c)
	}
	by := task.AgentActor(agent)
	prev, dir, err := s.load(ctx, id)
	if err != nil {
		return VerdictResult{}, err
	}
	var res VerdictResult
	err = withLock(ctx, prev.GitDir, func() error {
		cur, err := readChange(filepath.Join(dir, FileName))
		if err != nil {
			return err
		}
		round := cur.Round // the round the run reviewed
		if r := cur.Reviewing; r != nil && r.Run == run {
			round = r.Round
		}
		if cur.State != StateReview && cur.State != StateConflict || round != cur.Round || cur.LastVerdict() != nil && cur.LastVerdict().Run == run {
			return &agenterr.Error{Kind: agenterr.Conflict, Field: "id", Reason: fmt.Sprintf("task %s's change moved on while @%s reviewed it (it is %s, round %d): the verdict is not recorded", id, agent, strings.ReplaceAll(cur.State, "_", " "), cur.Round)}
		}
		v := Verdict{Round: cur.Round, By: string(by), Run: run, Decision: in.Decision, Summary: strings.TrimSpace(in.Summary), At: s.now().UTC()}
		res.Verdict = v
		if v.Decision == DecisionChanges && cur.reviewerSendBacks() < MaxReviewerRounds {
			if len(clean) == 0 {
				clean = []CommentInput{{Text: mdtext.Or(v.Summary, "the reviewer asked for changes without saying which")}}
			}
			cr, err := s.sendBack(ctx, dir, cur, clean, by, &v)
			res.Change, res.SentBack = cr.Change, err == nil
			return err
		}
		if v.Decision == DecisionChanges {
			res.Notes = append(res.Notes, fmt.Sprintf("the reviewer sent this change back %d times already: a person decides", MaxReviewerRounds))
		}
		next := cur
		next.Comments = append([]Comment{}, cur.Comments...)
		for _, cm := range clean {
			next.Comments = append(next.Comments, Comment{Round: cur.Round, By: string(by), At: v.At, File: cm.File, Line: cm.Line, Text: cm.Text})
		}
		next.Verdicts = append(append([]Verdict{}, cur.Verdicts...), v)
		if err := save(dir, next); err != nil {
			return err
		}
		lines := []string{readmeVerdict(s.stamp(), v) + readmeComments(clean)}
		if _, err := task.Review(ctx, s.ws, id, task.ReviewNote{Lines: lines}, by, s.now()); err != nil {
			_ = save(dir, cur)
			return err
		}
		res.Change = next
		return nil
	})
	if err != nil {
		return res, err
	}
	s.publish(res.Change, MoveVerdict, res.Verdict.Decision, string(by))
	if res.SentBack {
		s.publish(res.Change, MoveChanges, fmt.Sprintf("%d %s", len(clean), mdtext.Plural(len(clean), "comment", "comments")), string(by))
	}
	if res.Verdict.Decision == DecisionApprove && set.AutoLand {
		res.autoLand(ctx, s, set.Checks, by)
	}
	return res, nil
}

// autoLand lands an approved change whose checks passed (review.auto_land):
// "checks green" needs checks, so with none configured a person lands.
func (res *VerdictResult) autoLand(ctx context.Context, s *Service, checks []string, by task.Actor) {
	if st := ChecksState(res.Change, checks); st != ChecksPassed {
		res.Notes = append(res.Notes, "not landed on its own: its checks are "+st+" (review.auto_land lands a change whose review.checks passed)")
		return
	}
	a, err := s.Approve(ctx, res.Change.Task, ApproveOptions{By: by})
	if err != nil {
		res.Notes = append(res.Notes, "not landed on its own: "+agenterr.Of(err).Reason)
		return
	}
	res.Landed, res.Change = &a, a.Change
}

// readmeVerdict is the Review section's item of a reviewer's verdict.
func readmeVerdict(stamp string, v Verdict) string {
	line := fmt.Sprintf("%s: reviewed by %s", stamp, v.By)
	if v.Run != "" {
		line += " (run " + v.Run + ")"
	}
	switch v.Decision {
	case DecisionNone:
		line += ": no verdict"
	default:
		line += ": " + v.Decision
	}
	if v.Summary != "" {
		line += " — " + v.Summary
	}
	return line
}

// readmeComments lists comments under a Review section item.
func readmeComments(cs []CommentInput) string {
	var b strings.Builder
	for _, cm := range cs {
		b.WriteString("\n- ")
		if w := (Comment{File: cm.File, Line: cm.Line}).Where(); w != "" {
			b.WriteString("`" + w + "`: ")
		}
		b.WriteString(strings.ReplaceAll(cm.Text, "\n", "\n  "))
	}
	return b.String()
}
