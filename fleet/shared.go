package fleet

// shared.go exports the few pieces of the local backend that another
// backend (fleet/coder) needs to behave the same: the lock discipline of the
// fleet's files, the history's paging rules, the checks of list filters and
// run sources, and the task service's claim and finish of matrix tasks.

import (
	"context"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/matrix"
	tasksvc "github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// WithLock runs fn holding the lock file at path (created with its folder);
// a lock not got within 30s is a 503.
func WithLock(ctx context.Context, path string, fn func() error) error {
	return withLock(ctx, path, fn)
}

// WriteJSONFile replaces path atomically with v as indented JSON.
func WriteJSONFile(path string, v any) error { return writeJSON(path, v) }

// ReadJSONFile reads path into v; ok is false when the file does not exist.
func ReadJSONFile(path string, v any) (ok bool, err error) { return readJSON(path, v) }

// AppendJSONLine appends v as one JSON line to path and syncs it; a torn
// last line is first set aside in path+TornSuffix (see appendLine).
func AppendJSONLine(path string, v any) error {
	_, err := appendLine(path, v)
	return err
}

// ReadJSONLines decodes every JSON line of path (none when it does not
// exist); a last line without its newline is skipped.
func ReadJSONLines[T any](path string) ([]T, error) { return readLines[T](path) }

// WriteFleetIgnore makes git ignore agentDir/fleet (see WriteIgnore).
var WriteFleetIgnore = WriteIgnore

// PageRuns returns one page of runs (given newest first) of agent name with
// the history's rules: page ≥ 1, page_size 1–100, a page past the last is
// an error saying how many pages there are (page 1 of nothing is empty).
func PageRuns(name string, runs []TaskRun, page, pageSize int) (HistoryPage, error) {
	if page < 1 {
		return HistoryPage{}, badInput("page", "page %d is out of range: pages count from 1", page)
	}
	if pageSize < 1 || pageSize > MaxPageSize {
		return HistoryPage{}, badInput("page_size", "page_size %d is out of range: use 1 to %d (default %d)", pageSize, MaxPageSize, DefaultPageSize)
	}
	out := HistoryPage{Tasks: []TaskRun{}, TotalCount: len(runs), Page: page, PageSize: pageSize}
	runs = NormalizeRuns(runs)
	out.TotalPages = (len(runs) + pageSize - 1) / pageSize
	if page > 1 && page > out.TotalPages {
		return HistoryPage{}, badInput("page", "page %d is out of range: agent %s has %d run(s), %d page(s) of %d", page, name, len(runs), out.TotalPages, pageSize)
	}
	lo := (page - 1) * pageSize
	hi := min(lo+pageSize, len(runs))
	if lo < hi {
		out.Tasks = append(out.Tasks, runs[lo:hi]...)
	}
	return out, nil
}

// CheckPage checks page and pageSize before any work (the same errors as
// PageRuns).
func CheckPage(page, pageSize int) error {
	_, err := PageRuns("", nil, page, pageSize)
	if fe := agenterr.As(err); fe != nil && fe.Field == "page" && page >= 1 {
		return nil // past the last page: only known once the runs are
	}
	return err
}

// CheckStatusFilter refuses a status filter that is no status (400 on
// status_filter); "" matches everything.
func CheckStatusFilter(s string) error {
	if s != "" && !validStatus(s) {
		return badInput("status_filter", "unknown status %q: use one of %s", s, statusNames())
	}
	return nil
}

// CheckSource returns the run source s names ("" = human), or a 400.
func CheckSource(s string) (string, error) { return checkSource(s) }

// CheckStartInput refuses a start that does not give exactly one of a
// text, a task ID or next (400 on task_description).
func CheckStartInput(in StartInput) error {
	given := 0
	for _, b := range []bool{strings.TrimSpace(in.Text) != "", strings.TrimSpace(in.TaskID) != "", in.Next} {
		if b {
			given++
		}
	}
	if given != 1 {
		return badInput("task_description", "give exactly one of a task description, a task ID or next")
	}
	return nil
}

// ClaimedTask is a matrix task an agent claimed for a run.
type ClaimedTask struct {
	Task matrix.Task
	// Summary is the run's summary ("ID: description", shortened).
	Summary string
	// Prompt is the standard assembled prompt of the task.
	Prompt string
}

// ClaimTask claims a matrix task for agent in.Name (@name in Agents,
// IN_PROGRESS) through the task lifecycle, as the local backend's start
// does: the task named by in.TaskID, or the highest-priority ready one when
// in.Next. Refusals are fleet errors on task_id (409 held by another, 404
// unknown, 400 malformed). The prompt is assembled in the task's own mode.
func ClaimTask(ctx context.Context, ws *workspace.Workspace, in StartInput, now time.Time) (ClaimedTask, error) {
	c, err := claimFor(ctx, ws, in, "", nil, now, nil)
	c.Prompt = withNote(c.Prompt, in.Note)
	return c, err
}

// ReleaseTask gives back agent name's claim of task id when its run never
// started: the task returns to TODO if name still holds it.
func ReleaseTask(ctx context.Context, ws *workspace.Workspace, id, name string, now time.Time) error {
	_, err := tasksvc.Release(ctx, ws, id, "@"+name, tasksvc.AgentActor(name), now)
	return err
}

// Summarize shortens a free-text task to a run summary.
func Summarize(text string) string { return mdtext.Shorten(text, 120) }
