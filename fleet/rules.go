package fleet

import (
	"strings"

	"github.com/agentinfra/agentinfra/agenterr"
)

// PageRuns returns one page of runs (given newest first) of agent name with
// the history's rules: page ≥ 1, page_size 1–100, a page past the last is
// an error saying how many pages there are (page 1 of nothing is empty).
func PageRuns(name string, runs []TaskRun, page, pageSize int) (HistoryPage, error) {
	if page < 1 {
		return HistoryPage{}, agenterr.Invalidf("page", "page %d is out of range: pages count from 1", page)
	}
	if pageSize < 1 || pageSize > MaxPageSize {
		return HistoryPage{}, agenterr.Invalidf("page_size", "page_size %d is out of range: use 1 to %d (default %d)", pageSize, MaxPageSize, DefaultPageSize)
	}
	out := HistoryPage{Tasks: []TaskRun{}, TotalCount: len(runs), Page: page, PageSize: pageSize}
	runs = NormalizeRuns(runs)
	out.TotalPages = (len(runs) + pageSize - 1) / pageSize
	if page > 1 && page > out.TotalPages {
		return HistoryPage{}, agenterr.Invalidf("page", "page %d is out of range: agent %s has %d run(s), %d page(s) of %d", page, name, len(runs), out.TotalPages, pageSize)
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
		return agenterr.Invalidf("status_filter", "unknown status %q: use one of %s", s, statusNames())
	}
	return nil
}

// CheckSource returns the run source s names ("" = human), or a 400.

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
		return agenterr.Invalidf("task_description", "give exactly one of a task description, a task ID or next")
	}
	if in.Prompt != "" && strings.TrimSpace(in.TaskID) == "" {
		return agenterr.Invalidf("prompt", "a prompt replaces a matrix task's: give the task ID with it")
	}
	if in.ReviewOf != "" && strings.TrimSpace(in.Text) == "" {
		return agenterr.Invalidf("review_of", "a review run is a task description (the reviewer's prompt) naming the task it reviews")
	}
	return nil
}

func validStatus(s string) bool {
	for _, st := range Statuses {
		if string(st) == s {
			return true
		}
	}
	return false
}

func statusNames() string {
	var s []string
	for _, st := range Statuses {
		s = append(s, string(st))
	}
	return strings.Join(s, ", ")
}

// CheckSource returns the run source s names ("" = human), or a 400.
func CheckSource(s string) (string, error) {
	switch s {
	case "":
		return SourceHuman, nil
	case SourceAgent, SourceHuman, SourceAIController:
		return s, nil
	}
	return "", agenterr.Invalidf("source", "unknown source %q: use agent, human or ai_controller", s)
}
