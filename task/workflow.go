package task

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agentinfra/agentinfra/matrix"
)

// ErrWorkflowStatus says a workspace's status vocabulary has no word for a
// status agentinfra's workflow moves tasks to.
var ErrWorkflowStatus = errors.New("the matrix vocabulary has no word for a workflow status")

// The statuses agentinfra's workflow moves a task through: claim (TODO →
// IN_PROGRESS), the end of a run (REVIEW or BLOCKED), a release (back to
// TODO). A workspace that calls them otherwise (statuses: [TODO, DOING,
// ...]) names its word with an alias (aliases: {status: {IN_PROGRESS:
// DOING}}).
const (
	StatusTodo       = "TODO"
	StatusInProgress = "IN_PROGRESS"
	StatusReview     = "REVIEW"
	StatusBlocked    = "BLOCKED"
	StatusDone       = "DONE"
)

// WorkflowStatus is v's word for the workflow status canonical (one of the
// Status constants): the status itself, or the value an alias maps it to.
// Without one, the error says how to add it to .agent/config.yaml.
func WorkflowStatus(v *matrix.Vocabulary, canonical string) (string, error) {
	if s, err := v.Status(canonical); err == nil {
		return s, nil
	}
	statuses := v.Statuses()
	guess := "YOUR_WORD"
	for _, s := range statuses {
		if slices.ContainsFunc(workflowHints[canonical], func(h string) bool { return strings.Contains(strings.ToLower(s), h) }) {
			guess = s
			break
		}
	}
	src := v.Source()
	if src == "" {
		src = ".agent/config.yaml"
	}
	return "", fmt.Errorf("%w: agentinfra moves tasks to %s, which %s does not allow (statuses: %s); add it to matrix.statuses, or alias it to your word: matrix.aliases.status: {%s: %s}",
		ErrWorkflowStatus, canonical, src, strings.Join(statuses, ", "), canonical, guess)
}

// workflowHints are parts of the words people use for each workflow
// status, to suggest the alias to add.
var workflowHints = map[string][]string{
	StatusTodo:       {"todo", "to do", "open", "new", "backlog"},
	StatusInProgress: {"doing", "progress", "wip", "active", "started", "working"},
	StatusReview:     {"review"},
	StatusBlocked:    {"block", "hold", "waiting"},
	StatusDone:       {"done", "closed", "complete", "finished", "shipped"},
}

// isStatus reports whether status is v's word for the workflow status
// canonical (false when v has none).
func isStatus(v *matrix.Vocabulary, status, canonical string) bool {
	w, err := WorkflowStatus(v, canonical)
	return err == nil && status == w
}

// IsStatus reports whether t's status is its matrix's word for the
// workflow status canonical, with the workspace's vocabulary.
func IsStatus(v *matrix.Vocabulary, t matrix.Task, canonical string) bool {
	return isStatus(v, t.Status, canonical)
}
