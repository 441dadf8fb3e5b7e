package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/review"
	"github.com/agentinfra/agentinfra/task"
)

// The review tool's actions.
var reviewActions = []string{"list", "show", "changes", "approve"}

// maxReviewDiff bounds the diff review show returns: a model's context is
// the limit, and `agentinfra review show` prints the rest.
const maxReviewDiff = 256 << 10

// ReviewShow is the review tool's show: the change, its files, the task
// README's Review section and git's diff against its base.
type ReviewShow struct {
	review.Detail
	Diff string `json:"diff"`
	// DiffTruncated: the diff was longer than maxReviewDiff bytes.
	DiffTruncated bool `json:"diff_truncated,omitempty"`
}

// reviewTool is `review` in the fleet toolset: the review service (package
// review) as agentinfra review runs it, with the fleet, so that a change
// sent back reaches its agent.
func (s *Server) reviewTool() fleetTool {
	return fleetTool{
		name: "review", title: "Review changes", destructive: true,
		desc: "Changes of tasks in REVIEW. list; show task_id (checks, review, diff); changes task_id comments (back to its agent, IN_PROGRESS); approve task_id (lands it, DONE; refused on conflict or failed checks).",
		params: []fleetParam{{"action", "string", "list|show|changes|approve"}, {"task_id", "string", ""},
			{"comments", "array", "[{text, file, line}]"}, {"strategy", "string", "squash|merge|rebase"}, {"force", "boolean", "land despite checks"}},
		required: []string{"action"},
		run: func(ctx context.Context, f fleet.Backend, in fleetArgs) (any, error) {
			svc := review.NewService(s.ws, review.Options{Now: s.opts.Now, Fleet: f})
			if in.Action != "list" && strings.TrimSpace(in.TaskID) == "" {
				return nil, agenterr.Invalidf("task_id", "task_id is required for %s", in.Action)
			}
			switch in.Action {
			case "list":
				items, err := svc.List(ctx)
				if items == nil {
					items = []review.Item{}
				}
				return map[string]any{"changes": items}, err
			case "show":
				d, err := svc.Show(ctx, in.TaskID)
				if err != nil {
					return nil, err
				}
				var b strings.Builder
				if err := svc.Diff(ctx, in.TaskID, &b, review.DiffOptions{}); err != nil {
					return nil, err
				}
				out := ReviewShow{Detail: d, Diff: b.String()}
				if len(out.Diff) > maxReviewDiff {
					out.Diff, out.DiffTruncated = strings.ToValidUTF8(out.Diff[:maxReviewDiff], ""), true
				}
				return out, nil
			case "changes":
				if len(in.Comments) == 0 {
					return nil, agenterr.Invalidf("comments", "changes needs at least one comment: [{text, file, line}]")
				}
				return svc.RequestChanges(ctx, in.TaskID, in.Comments, task.ActorFrom(ctx))
			case "approve":
				return svc.Approve(ctx, in.TaskID, review.ApproveOptions{Strategy: in.Strategy, Force: in.Force, By: task.ActorFrom(ctx)})
			}
			return nil, &agenterr.Error{Kind: agenterr.Invalid, Field: "action", Value: in.Action, Valid: reviewActions,
				Reason: fmt.Sprintf("unknown action %q: use %s", in.Action, strings.Join(reviewActions, ", "))}
		},
	}
}
