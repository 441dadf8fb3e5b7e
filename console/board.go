package console

import (
	"bytes"
	"context"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"strings"

	"github.com/yuin/goldmark"

	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/task"
)

// column is one status of the workspace's own words, with its cards.
type column struct {
	Status string
	Tasks  []matrix.Task
}

type boardData struct {
	Columns  []column
	Statuses []string
	Error    string
	Problems int
	// Review is the workspace's word for REVIEW: its cards link to the
	// change's review page.
	Review string
	// Waiting is what each task's session waits a person for, by task ID.
	Waiting map[string]*waitBadge
}

func (s *Server) boardData(ctx context.Context) boardData {
	v, err := task.LoadVocabulary(s.o.Workspace)
	if err != nil {
		return boardData{Error: err.Error()}
	}
	ts, diags, err := task.ListTasksWithProblems(ctx, s.o.Workspace, matrix.Query{})
	if err != nil {
		return boardData{Error: err.Error()}
	}
	d := boardData{Statuses: v.Statuses(), Problems: len(diags), Waiting: s.waits(ctx).byTask}
	d.Review, _ = task.WorkflowStatus(v, task.StatusReview)
	idx := map[string]int{}
	for i, st := range d.Statuses {
		idx[st] = i
		d.Columns = append(d.Columns, column{Status: st})
	}
	for _, t := range ts {
		i, ok := idx[t.Status]
		if !ok { // a value the config does not list: a column of its own
			i = len(d.Columns)
			idx[t.Status] = i
			d.Columns = append(d.Columns, column{Status: t.Status})
		}
		d.Columns[i].Tasks = append(d.Columns[i].Tasks, t)
	}
	for i := range d.Columns {
		slices.SortStableFunc(d.Columns[i].Tasks, func(a, b matrix.Task) int { return v.ComparePriority(a.Priority, b.Priority) })
	}
	return d
}

func (s *Server) boardPage(w http.ResponseWriter, r *http.Request) {
	s.page(w, r, "board", "Board", s.boardData(r.Context()))
}

func (s *Server) boardColumns(w http.ResponseWriter, r *http.Request) {
	s.render(w, "board", "board-columns", s.boardData(r.Context()))
}

// boardMove changes a task's status the way `task update ID --status S`
// does: through the task service, under the matrix lock, with its checks.
func (s *Server) boardMove(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	status := strings.TrimSpace(r.FormValue("status"))
	if status == "" {
		s.fail(w, r, "/board", badInput("say which status to move %s to", id))
		return
	}
	ctx := task.WithActor(r.Context(), task.Actor(s.o.User))
	res, err := task.UpdateTask(ctx, s.o.Workspace, id, matrix.Update{Status: matrix.Str(status)}, s.o.Now(),
		task.UpdateOptions{Getenv: s.o.Getenv, Actor: task.Actor(s.o.User)})
	if err != nil {
		s.fail(w, r, "/board", err)
		return
	}
	if !slices.Contains(res.Changed, "status") {
		s.done(w, r, "/board", fmt.Sprintf("%s is %s already.", id, res.After.Status))
		return
	}
	s.done(w, r, "/board", fmt.Sprintf("%s: %s → %s.", id, res.Before.Status, res.After.Status))
}

type taskData struct {
	task.TaskInfo
	Readme   template.HTML
	Statuses []string
	Rel      string
}

func (s *Server) taskPage(w http.ResponseWriter, r *http.Request) {
	info, err := task.ShowTask(r.Context(), s.o.Workspace, r.PathValue("id"))
	if err != nil {
		s.fail(w, r, "/board", err)
		return
	}
	d := taskData{TaskInfo: info}
	if v, err := task.LoadVocabulary(s.o.Workspace); err == nil {
		d.Statuses = v.Statuses()
	}
	if info.Dir != "" {
		d.Rel = s.o.Workspace.RelPath(info.Dir)
	}
	if info.Readme != "" {
		// goldmark leaves raw HTML out unless told otherwise: a README
		// cannot put a script on the page.
		var b bytes.Buffer
		if err := goldmark.Convert([]byte(info.Readme), &b); err == nil {
			d.Readme = template.HTML(b.String())
		}
	}
	s.page(w, r, "task", info.Task.ID, d)
}
