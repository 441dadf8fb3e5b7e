package handoff

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/matrix"
	tasksvc "github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/taskcontext"
	"github.com/agentinfra/agentinfra/workspace"
)

// Build gathers and renders a handoff without writing it.
func Build(ctx context.Context, ws *workspace.Workspace, now time.Time, opts Options) (Report, error) {
	opts = opts.withDefaults()
	doc := opts.Doc
	if doc == nil {
		store, err := tasksvc.OpenStore(ws)
		if err == nil {
			doc, err = store.Load(ctx)
		}
		if err != nil {
			return Report{}, fmt.Errorf("load the task matrix: %w", err)
		}
	}
	h := Report{
		GeneratedAt: now.Format(time.RFC3339),
		InProgress:  []Task{}, Review: []Task{}, Blocked: []Task{},
		RecentlyDone: []Task{}, NextUp: []Task{},
	}
	type ranked struct {
		t   matrix.Task
		pos int
	}
	var active, done, todo []ranked
	for i, t := range doc.Tasks() {
		switch t.Status {
		case "IN_PROGRESS", "REVIEW", "BLOCKED":
			active = append(active, ranked{t, i})
		case "DONE":
			done = append(done, ranked{t, i})
		case "TODO":
			todo = append(todo, ranked{t, i})
		}
	}
	prio := doc.Vocabulary().PriorityRank // the workspace's words; no priority last
	sort.SliceStable(active, func(i, j int) bool { return prio(active[i].t.Priority) < prio(active[j].t.Priority) })
	sort.SliceStable(done, func(i, j int) bool {
		a, b := parseTime(done[i].t.Updated), parseTime(done[j].t.Updated)
		return a.After(b)
	})
	sort.SliceStable(todo, func(i, j int) bool {
		pi, pj := prio(todo[i].t.Priority), prio(todo[j].t.Priority)
		if pi != pj {
			return pi < pj
		}
		return parseTime(todo[i].t.Created).Before(parseTime(todo[j].t.Created))
	})
	for _, r := range active {
		if err := ctx.Err(); err != nil {
			return Report{}, err
		}
		ht := taskOf(ws, doc, r.t)
		ht.LatestNote = latestNote(ws, ht.TaskDir, opts.NoteBytes)
		switch r.t.Status {
		case "IN_PROGRESS":
			h.InProgress = append(h.InProgress, ht)
		case "REVIEW":
			h.Review = append(h.Review, ht)
		default:
			h.Blocked = append(h.Blocked, ht)
		}
	}
	h.DoneTotal, h.TodoTotal = len(done), len(todo)
	for _, r := range done[:min(len(done), opts.Done)] {
		h.RecentlyDone = append(h.RecentlyDone, taskOf(ws, doc, r.t))
	}
	for _, r := range todo[:min(len(todo), opts.Next)] {
		h.NextUp = append(h.NextUp, taskOf(ws, doc, r.t))
	}
	h.Git = readGit(ctx, ws.Root, opts)
	h.Text = Render(h, now)
	return h, nil
}

// parseTime parses Created/Updated as written (YYYY-MM-DD[ HH:MM[:SS]]);
// an unparsable value is the zero time, so it sorts as oldest.
func parseTime(s string) time.Time {
	for _, l := range []string{"2006-01-02", "2006-01-02 15:04", "2006-01-02 15:04:05", "2006-01-02T15:04", "2006-01-02T15:04:05", time.RFC3339} {
		if t, err := time.Parse(l, strings.TrimSpace(s)); err == nil {
			return t
		}
	}
	return time.Time{}
}

func taskOf(ws *workspace.Workspace, doc *matrix.Doc, t matrix.Task) Task {
	ht := Task{ID: t.ID, Status: t.Status, Priority: t.Priority, Difficulty: t.Difficulty, Mode: t.Mode,
		Agents: append([]string{}, t.Agents...), Description: t.Description, Created: t.Created, Updated: t.Updated}
	if dir, _ := tasksvc.Folder(ws, doc, t.ID); dir != "" {
		ht.TaskDir = ws.RelPath(dir) + "/"
	}
	return ht
}

func latestNote(ws *workspace.Workspace, taskDir string, limit int) *Note {
	if taskDir == "" {
		return nil
	}
	tr, err := taskcontext.ReadTracking(ws, filepath.Join(ws.Root, filepath.FromSlash(taskDir)), 1, limit)
	if err != nil || tr.Error != "" || len(tr.Entries) == 0 {
		return nil
	}
	e := tr.Entries[0]
	n := &Note{Path: e.Path, Bytes: e.Bytes, Truncated: e.Truncated, Content: mdtext.TrimBlankLines(e.Content)}
	if e.Binary {
		n.Content = "(binary file; not shown)"
	}
	return n
}
