package console

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/internal/termsafe"
	"github.com/agentinfra/agentinfra/supervision"
)

//go:embed web/templates/*.html web/static/*
var webFS embed.FS

func staticHandler() http.Handler {
	sub, _ := fs.Sub(webFS, "web/static")
	return http.FileServerFS(sub)
}

// pages are rendered in the layout; each page's file also defines the
// fragments its live regions re-read.
var pageFiles = []string{"inbox", "sessions", "session", "fleet", "board", "task", "review", "change", "error"}

type templates struct{ pages map[string]*template.Template }

func loadTemplates() (*templates, error) {
	base, err := template.New("").Funcs(funcs).ParseFS(webFS, "web/templates/layout.html", "web/templates/parts.html")
	if err != nil {
		return nil, err
	}
	t := &templates{pages: map[string]*template.Template{}}
	for _, p := range pageFiles {
		c, err := base.Clone()
		if err != nil {
			return nil, err
		}
		if t.pages[p], err = c.ParseFS(webFS, "web/templates/"+p+".html"); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// view is what every page's layout shows.
type view struct {
	Title     string
	Nav       string
	User      string
	Workspace string
	Pending   int
	// Waiting: the keys of what waits when the page was made (the
	// notifications are for what comes after).
	Waiting string
	Data    any
}

func (s *Server) page(w http.ResponseWriter, r *http.Request, name, title string, data any) {
	items, _ := s.waiting(r.Context())
	s.render(w, name, "layout", view{Title: title, Nav: name, User: s.o.User, Workspace: s.o.Workspace.Root, Pending: len(items), Waiting: waitingKeys(items), Data: data})
}

// render executes one template of a page's set into w (whole, or a 500).
func (s *Server) render(w http.ResponseWriter, pageName, tmpl string, data any) {
	var b bytes.Buffer
	if err := s.tpl.pages[pageName].ExecuteTemplate(&b, tmpl, data); err != nil {
		http.Error(w, "render "+tmpl+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	// The template escaped the agent's text for HTML; a bidi override or a
	// zero-width character in it would still reorder or hide what a person
	// reads (a file name shown backwards): shown as escapes, on every page.
	io.WriteString(w, termsafe.Visible(b.String()))
}

// wantsJSON: the page's script asks for JSON answers; a plain form post
// (no script) gets a redirect or an error page.
func wantsJSON(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "application/json")
}

// done answers a change that succeeded.
func (s *Server) done(w http.ResponseWriter, r *http.Request, back, msg string) {
	if wantsJSON(r) {
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "message": msg})
		return
	}
	http.Redirect(w, r, back, http.StatusSeeOther)
}

// fail answers a change that was refused, with the service's own words and
// the status of its kind.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, back string, err error) {
	code := statusOf(err)
	if wantsJSON(r) {
		writeJSON(w, code, map[string]any{"ok": false, "error": err.Error()})
		return
	}
	w.WriteHeader(code)
	s.render(w, "error", "layout", view{Title: "Not done", User: s.o.User, Workspace: s.o.Workspace.Root,
		Data: map[string]string{"Error": err.Error(), "Back": back}})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// statusOf is the HTTP status of a service's error: its agenterr kind's
// (the page's own bad input is a 400).
func statusOf(err error) int {
	if errors.Is(err, errBadInput) {
		return http.StatusBadRequest
	}
	return agenterr.HTTPStatus(err)
}

var errBadInput = errors.New("bad input")

func badInput(format string, a ...any) error {
	return fmt.Errorf("%w: %s", errBadInput, fmt.Sprintf(format, a...))
}

// diffLine is one line of a unified diff, classed for colour.
type diffLine struct {
	Class, Text string
}

// foldAfter is how many lines of a diff show before the rest is folded.
const foldAfter = 24

type diffView struct {
	Head, Rest []diffLine
	// More counts the lines of the request's diff the page leaves out
	// (after pageDiffLines or pageDiffBytes); Link shows it whole, with
	// Bytes, the whole's size when the request kept it in a file.
	More  int
	Link  string
	Bytes int64
}

// A page shows a request's diff up to pageDiffLines lines and
// pageDiffBytes bytes, and links to the rest: a page (refreshed live)
// stays small whatever the agent asked (issue 27: a 65 MB diff made a
// 200 MB page).
const (
	pageDiffLines = 400
	pageDiffBytes = 64 << 10
)

// requestDiff is a request's diff as a page shows it: its head, and a link
// to the whole when the page or the store cut it.
func requestDiff(r supervision.Request) diffView {
	diff, rest := r.Diff, ""
	lines, size := 0, 0
	for i := 0; i < len(diff); {
		j := strings.IndexByte(diff[i:], '\n')
		if j < 0 {
			j = len(diff) - i - 1
		}
		if lines == pageDiffLines || size+j+1 > pageDiffBytes {
			if lines == 0 { // one line longer than a page shows: its head
				cut := pageDiffBytes
				for k := 0; k < utf8.UTFMax && cut > 0 && !utf8.RuneStart(diff[cut]); k++ {
					cut--
				}
				diff, rest = diff[:cut]+"\n", diff[cut:]
			} else {
				diff, rest = diff[:i], diff[i:]
			}
			break
		}
		lines, size, i = lines+1, size+j+1, i+j+1
	}
	v := diffOf(diff)
	if rest != "" || r.DiffCut() {
		v.More = strings.Count(strings.TrimRight(rest, "\n"), "\n")
		if rest != "" {
			v.More++
		}
		v.Link, v.Bytes = fmt.Sprintf("/inbox/%d/diff", r.ID), r.DiffBytes
	}
	return v
}

func diffOf(diff string) diffView {
	var lines []diffLine
	for _, l := range strings.Split(strings.TrimRight(diff, "\n"), "\n") {
		c := "ctx"
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
			c = "file"
		case strings.HasPrefix(l, "@@"):
			c = "hunk"
		case strings.HasPrefix(l, "+"):
			c = "add"
		case strings.HasPrefix(l, "-"):
			c = "del"
		}
		lines = append(lines, diffLine{c, l})
	}
	if len(lines) > foldAfter+6 { // folding fewer than 6 lines saves nothing
		return diffView{Head: lines[:foldAfter], Rest: lines[foldAfter:]}
	}
	return diffView{Head: lines}
}

var funcs = template.FuncMap{
	"diff":    diffOf,
	"reqdiff": requestDiff,
	"handle":  supervision.Handle,
	"clock": func(t any) string {
		switch v := t.(type) {
		case time.Time:
			return v.Local().Format("15:04:05")
		case *time.Time:
			if v == nil {
				return ""
			}
			return v.Local().Format("15:04:05")
		}
		return ""
	},
	"iso": func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"short": func(n int, s string) string {
		return mdtext.Shorten(strings.Join(strings.Fields(s), " "), n)
	},
	"join": strings.Join,
	// item is a README list item's text, its bullet dropped.
	"item": func(s string) string { return strings.TrimPrefix(strings.TrimSpace(s), "- ") },
	"age": func(sec int64) string {
		d := time.Duration(sec) * time.Second
		switch {
		case d < time.Minute:
			return "just now"
		case d < time.Hour:
			return fmt.Sprintf("%d min ago", int(d.Minutes()))
		case d < 48*time.Hour:
			return fmt.Sprintf("%d h ago", int(d.Hours()))
		}
		return fmt.Sprintf("%d days ago", int(d.Hours()/24))
	},
	"expires": func(t *time.Time) string {
		if t == nil {
			return "never expires"
		}
		d := time.Until(*t).Round(time.Second)
		if d <= 0 {
			return "expires now"
		}
		return "expires in " + d.String()
	},
}
