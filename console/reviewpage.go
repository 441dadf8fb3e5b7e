package console

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/agentinfra/agentinfra/review"
	"github.com/agentinfra/agentinfra/task"
)

// reviews is the review service as the console uses it: with the fleet,
// so that a change sent back reaches its agent, and the console's bus.
func (s *Server) reviews() *review.Service {
	return review.NewService(s.o.Workspace, review.Options{Now: s.o.Now, Bus: s.bus(), Fleet: s.o.Fleet})
}

type reviewListData struct {
	Items []review.Item
	Error string
}

func (s *Server) reviewListData(ctx context.Context) reviewListData {
	items, err := s.reviews().List(ctx)
	d := reviewListData{Items: items}
	if err != nil {
		d.Error = err.Error()
	}
	return d
}

func (s *Server) reviewPage(w http.ResponseWriter, r *http.Request) {
	s.page(w, r, "review", "Review", s.reviewListData(r.Context()))
}

func (s *Server) reviewList(w http.ResponseWriter, r *http.Request) {
	s.render(w, "review", "review-list", s.reviewListData(r.Context()))
}

// changeData is one change as its page shows it.
type changeData struct {
	ID     string
	Detail review.Detail
	Files  []fileDiff
	// Strategies are approve's choices, the configured one first.
	Strategies []string
	Error      string
}

func (s *Server) changeData(ctx context.Context, id string) (changeData, error) {
	svc := s.reviews()
	d, err := svc.Show(ctx, id)
	if err != nil {
		return changeData{}, err
	}
	cd := changeData{ID: id, Detail: d, Strategies: []string{"squash", "merge", "rebase"}}
	var b strings.Builder
	if err := svc.Diff(ctx, id, &b, review.DiffOptions{}); err != nil {
		cd.Error = err.Error()
	}
	cd.Files = fileDiffs(b.String())
	return cd, nil
}

func (s *Server) changePage(w http.ResponseWriter, r *http.Request) {
	d, err := s.changeData(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, "/review", err)
		return
	}
	s.page(w, r, "change", "Review "+d.ID, d)
}

func (s *Server) changePanel(w http.ResponseWriter, r *http.Request) {
	d, err := s.changeData(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, "/review", err)
		return
	}
	s.render(w, "change", "change-panel", d)
}

// reviewChanges sends the change back with the form's comments: text[i]
// with file[i] and line[i] (both may be empty: a comment on the whole
// change, or on a file).
func (s *Server) reviewChanges(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	back := "/review/" + id
	if err := r.ParseForm(); err != nil {
		s.fail(w, r, back, badInput("%v", err))
		return
	}
	texts, files, lines := r.PostForm["text"], r.PostForm["file"], r.PostForm["line"]
	var cs []review.CommentInput
	for i, t := range texts {
		if strings.TrimSpace(t) == "" {
			continue
		}
		c := review.CommentInput{Text: strings.TrimSpace(t)}
		if i < len(files) {
			c.File = strings.TrimSpace(files[i])
		}
		if i < len(lines) && strings.TrimSpace(lines[i]) != "" {
			n, err := strconv.Atoi(strings.TrimSpace(lines[i]))
			if err != nil || n < 1 {
				s.fail(w, r, back, badInput("line %q is not a line number", lines[i]))
				return
			}
			c.Line = n
		}
		cs = append(cs, c)
	}
	if len(cs) == 0 {
		s.fail(w, r, back, badInput("write a comment: it is what the agent is told to change"))
		return
	}
	actor := task.Actor(s.o.User)
	res, err := s.reviews().RequestChanges(task.WithActor(r.Context(), actor), id, cs, actor)
	if err != nil {
		s.fail(w, r, back, err)
		return
	}
	msg := fmt.Sprintf("Task %s sent back to @%s with %d comment(s).", id, res.Change.Agent, len(cs))
	if d := res.Delivery; d != nil && d.Run != "" {
		msg += fmt.Sprintf(" It started on them in run %s.", d.Run)
	} else if d != nil && d.Waiting != "" {
		msg += " " + d.Waiting
	}
	s.done(w, r, back, msg)
}

func (s *Server) reviewApprove(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	actor := task.Actor(s.o.User)
	res, err := s.reviews().Approve(task.WithActor(r.Context(), actor), id, review.ApproveOptions{
		Strategy: r.FormValue("strategy"), Force: r.FormValue("force") != "", By: actor})
	if err != nil {
		s.fail(w, r, "/review/"+id, err)
		return
	}
	msg := fmt.Sprintf("Task %s landed on %s (%s); it is %s.", id, res.Change.BaseBranch, res.Change.Landed.Strategy, res.Task.Status)
	s.done(w, r, "/review/"+id, msg)
}

// fileDiff is one file of a change's diff, its lines numbered.
type fileDiff struct {
	Path string
	// Header are git's lines before the first hunk (index, mode, binary).
	Header []string
	Lines  []numberedLine
	// Folded: a long file starts closed.
	Folded bool
}

// numberedLine is a line of a hunk with its numbers in the old and the new
// file (0: not there).
type numberedLine struct {
	Class    string
	Old, New int
	Text     string
}

// foldFileAfter is the size past which a file's diff starts folded.
const foldFileAfter = 200

// fileDiffs splits git's unified diff into files and numbers the lines of
// each hunk from its @@ header.
func fileDiffs(diff string) []fileDiff {
	var out []fileDiff
	var cur *fileDiff
	old, nw := 0, 0
	for _, l := range strings.Split(strings.TrimRight(diff, "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, "diff --git "):
			out = append(out, fileDiff{Path: diffPath(l)})
			cur = &out[len(out)-1]
			continue
		case cur == nil:
			continue
		case strings.HasPrefix(l, "@@"):
			old, nw = hunkStart(l)
			cur.Lines = append(cur.Lines, numberedLine{Class: "hunk", Text: l})
			continue
		case len(cur.Lines) == 0:
			if p, ok := strings.CutPrefix(l, "+++ b/"); ok {
				cur.Path = p
			}
			cur.Header = append(cur.Header, l)
			continue
		}
		switch {
		case strings.HasPrefix(l, "+"):
			cur.Lines = append(cur.Lines, numberedLine{Class: "add", New: nw, Text: l})
			nw++
		case strings.HasPrefix(l, "-"):
			cur.Lines = append(cur.Lines, numberedLine{Class: "del", Old: old, Text: l})
			old++
		case strings.HasPrefix(l, `\`):
			cur.Lines = append(cur.Lines, numberedLine{Class: "ctx", Text: l})
		default:
			cur.Lines = append(cur.Lines, numberedLine{Class: "ctx", Old: old, New: nw, Text: l})
			old++
			nw++
		}
	}
	for i := range out {
		out[i].Folded = len(out[i].Lines) > foldFileAfter
	}
	return out
}

// diffPath is the new path of a "diff --git a/X b/Y" line (git quotes
// unusual names; the +++ line, when there is one, corrects it).
func diffPath(l string) string {
	rest := strings.TrimPrefix(l, "diff --git ")
	if i := strings.LastIndex(rest, " b/"); i >= 0 {
		return rest[i+3:]
	}
	return rest
}

// hunkStart reads "@@ -a,b +c,d @@" as a and c.
func hunkStart(l string) (old, nw int) {
	f := strings.Fields(l)
	num := func(s string) int {
		s, _, _ = strings.Cut(s[1:], ",")
		n, _ := strconv.Atoi(s)
		return n
	}
	if len(f) >= 3 {
		return num(f[1]), num(f[2])
	}
	return 0, 0
}
