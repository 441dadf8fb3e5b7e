package task

// The review of a task's change (package review): the moves out of REVIEW
// and the README's Review section, where the review's story is kept in
// words a person reads in git (the change recorded, the comments of each
// request for changes, a refused landing, the landing).
//
//	REVIEW ──changes requested──▶ IN_PROGRESS   (the same agent works on it again)
//	REVIEW ──landed─────────────▶ DONE

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/workspace"
)

// ErrNotInReview is a review move of a task that is not in REVIEW.
var ErrNotInReview = agenterr.New(agenterr.Conflict, "task is not in review")

// ReviewSection is the heading of the task README's review section.
const ReviewSection = "Review"

// ReviewNote is what a review writes to a task: lines for its README's
// Review section and, with To, a move out of REVIEW.
type ReviewNote struct {
	// To is the workflow status the task moves to from REVIEW
	// (StatusInProgress: changes requested; StatusDone: landed); "" keeps
	// the status, whatever it is.
	To string
	// Lines are appended to the README's Review section, one Markdown list
	// item each ("- " is added; a line may go on over several lines, kept
	// under its item), the section added at the README's end when missing.
	Lines []string
	// Reason is the status log line's reason.
	Reason string
}

// Review writes n for task id under the matrix lock, all or nothing: the
// Review section's lines, and with n.To the status move from REVIEW with
// its status log line naming by. A move of a task that is not in REVIEW
// is refused (ErrNotInReview) and nothing is written; a task with no
// README is refused (the review has nowhere to be kept).
func Review(ctx context.Context, ws *workspace.Workspace, id string, n ReviewNote, by Actor, now time.Time) (UpdateResult, error) {
	if n.To != "" && n.To != StatusInProgress && n.To != StatusDone {
		return UpdateResult{}, fmt.Errorf("a review moves a task to %s or %s, not %s", StatusInProgress, StatusDone, n.To)
	}
	w := stamp{now: now, by: by.or(ctx), reason: n.Reason, review: n.Lines}
	return modifyTask(ctx, ws, id, w, func(d *matrix.Doc, before matrix.Task) (matrix.Task, error) {
		if n.To == "" {
			return before, nil
		}
		v := d.Vocabulary()
		if !isStatus(v, before.Status, StatusReview) {
			return matrix.Task{}, &agenterr.Error{Kind: agenterr.Conflict, Err: ErrNotInReview, Field: "id",
				Reason: fmt.Sprintf("task %s is %s; only a task in REVIEW can be sent back or landed", id, before.Status)}
		}
		word, err := WorkflowStatus(v, n.To)
		if err != nil {
			return matrix.Task{}, err
		}
		return d.UpdateTask(id, matrix.Update{Status: &word}, now)
	})
}

// appendReview adds lines to the README's Review section, made at its end
// when missing. A line that goes on over several lines has them indented
// under its list item.
func appendReview(readme []byte, lines []string) []byte {
	items := make([]string, len(lines))
	for i, l := range lines {
		items[i] = "- " + strings.ReplaceAll(strings.TrimRight(l, "\n"), "\n", "\n  ")
	}
	out, ok := appendToSection(readme, func(text string) bool {
		return strings.EqualFold(text, ReviewSection)
	}, items)
	if ok {
		return out
	}
	head := "## " + ReviewSection + "\n\n" + strings.Join(items, "\n") + "\n"
	return append(append(append([]byte{}, readme...), statusSectionSep(readme)...), head...)
}

// ReviewLines returns the list items of the README's Review section, in
// order, each with the lines that continue it ("" section: none).
func ReviewLines(readme []byte) []string {
	var (
		out   []string
		in    bool
		level int
		fence string
	)
	for _, l := range strings.Split(strings.ReplaceAll(string(readme), "\r\n", "\n"), "\n") {
		trim := strings.TrimLeft(l, " ")
		if strings.HasPrefix(trim, "```") || strings.HasPrefix(trim, "~~~") {
			if fence == "" {
				fence = trim[:3]
			} else if strings.HasPrefix(trim, fence) {
				fence = ""
			}
		}
		if fence == "" {
			if lv, text := atxHeading(l); lv > 0 {
				switch {
				case strings.EqualFold(text, ReviewSection) && !in:
					in, level = true, lv
					continue
				case in && lv <= level:
					return out
				}
			}
		}
		switch {
		case !in || strings.TrimSpace(l) == "":
		case strings.HasPrefix(l, "- "):
			out = append(out, l)
		case len(out) > 0:
			out[len(out)-1] += "\n" + l
		}
	}
	return out
}
