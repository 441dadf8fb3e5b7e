package dispatch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/skills"
	"github.com/agentinfra/agentinfra/workspace"
)

// Default bounds of a handoff (see HandoffOptions).
const (
	DefaultHandoffDone      = 10
	DefaultHandoffNext      = 10
	DefaultHandoffNoteBytes = 800
	DefaultHandoffGitFiles  = 50
	HandoffCommits          = 5
)

// HandoffOptions configures Handoff. Zero values mean the defaults.
type HandoffOptions struct {
	// Doc is the parsed matrix; nil means load ws.MatrixPath().
	Doc *matrix.Doc
	// Out is where to write instead of .agent/handoffs/{YYMMDD_HHMM}_handoff.md:
	// a path relative to the workspace root or absolute, whose folder must be
	// inside the workspace. An existing file is refused.
	Out string
	// Done bounds "recently done" (default DefaultHandoffDone).
	Done int
	// Next bounds "next up" (default DefaultHandoffNext).
	Next int
	// NoteBytes bounds each latest tracking note; longer notes keep their end.
	NoteBytes int
	// GitFiles bounds the list of uncommitted files (default DefaultHandoffGitFiles).
	GitFiles int
	// Git is the git binary (default "git", looked up on PATH).
	Git string
}

func (o HandoffOptions) withDefaults() HandoffOptions {
	if o.Done <= 0 {
		o.Done = DefaultHandoffDone
	}
	if o.Next <= 0 {
		o.Next = DefaultHandoffNext
	}
	if o.NoteBytes <= 0 {
		o.NoteBytes = DefaultHandoffNoteBytes
	}
	if o.GitFiles <= 0 {
		o.GitFiles = DefaultHandoffGitFiles
	}
	if o.Git == "" {
		o.Git = "git"
	}
	return o
}

// HandoffReport is the structured content of a handoff file. Lists are never nil.
type HandoffReport struct {
	GeneratedAt string        `json:"generated_at"` // RFC 3339
	InProgress  []HandoffTask `json:"in_progress"`
	Review      []HandoffTask `json:"review"`
	Blocked     []HandoffTask `json:"blocked"`
	// RecentlyDone is DONE tasks, most recently updated first, at most Done of DoneTotal.
	RecentlyDone []HandoffTask `json:"recently_done"`
	DoneTotal    int           `json:"done_total"`
	// NextUp is TODO tasks by priority, then oldest Created first, at most Next of TodoTotal.
	NextUp    []HandoffTask `json:"next_up"`
	TodoTotal int           `json:"todo_total"`
	Git       HandoffGit    `json:"git"`
	// Text is the Markdown written to the file.
	Text string `json:"text"`
}

// HandoffTask is one task in a handoff.
type HandoffTask struct {
	ID          string   `json:"id"`
	Status      string   `json:"status"`
	Priority    string   `json:"priority"`
	Difficulty  string   `json:"difficulty"`
	Mode        string   `json:"mode"`
	Agents      []string `json:"agents"`
	Description string   `json:"description"`
	Created     string   `json:"created"`
	Updated     string   `json:"updated"`
	TaskDir     string   `json:"task_dir"` // workspace-relative with a trailing slash, "" when none
	// LatestNote is the last tracking file by name (only for IN_PROGRESS, REVIEW and BLOCKED).
	LatestNote *HandoffNote `json:"latest_note"`
}

// HandoffNote is the end of a task's latest tracking file.
type HandoffNote struct {
	Path      string `json:"path"`
	Bytes     int    `json:"bytes"`
	Truncated bool   `json:"truncated"` // Content is only the last NoteBytes bytes
	Content   string `json:"content"`
}

// HandoffGit is the git state of the workspace root.
type HandoffGit struct {
	// Repo is true when the root is inside a git work tree and git could read it.
	Repo bool `json:"repo"`
	// Note explains why there is no git information (git missing, not a repository, an error).
	Note   string `json:"note"`
	Branch string `json:"branch"` // "" when detached
	// Detached is true when HEAD is not on a branch; Head is then its short hash.
	Detached bool   `json:"detached"`
	Head     string `json:"head"`
	// Prefix is the workspace root's folder relative to the repository top
	// ("" when the root is the top), with a trailing slash.
	Prefix string `json:"prefix"`
	// Uncommitted is `git status --porcelain` (paths relative to the repository top), at most GitFiles of UncommittedTotal.
	Uncommitted      []HandoffGitFile   `json:"uncommitted"`
	UncommittedTotal int                `json:"uncommitted_total"`
	Commits          []HandoffGitCommit `json:"commits"` // the last five, newest first
}

// HandoffGitFile is one line of git status.
type HandoffGitFile struct {
	Status string `json:"status"` // the two-letter XY code, e.g. " M", "??", "R "
	Path   string `json:"path"`
	From   string `json:"from"` // the original path of a rename or copy
}

// HandoffGitCommit is one commit of git log.
type HandoffGitCommit struct {
	Hash    string `json:"hash"`
	Short   string `json:"short"`
	Author  string `json:"author"`
	Date    string `json:"date"` // author date, ISO 8601
	Subject string `json:"subject"`
}

// Handoff writes a handoff note of the workspace state at now and returns its
// absolute path and content. By default it creates
// .agent/handoffs/{YYMMDD_HHMM}_handoff.md, adding _2, _3, ... to the name
// when that file exists (files are created with O_EXCL, so a handoff is never
// overwritten). With opts.Out it writes there instead, refusing a folder
// outside the workspace and an existing file.
func Handoff(ctx context.Context, ws *workspace.Workspace, now time.Time, opts HandoffOptions) (string, HandoffReport, error) {
	opts = opts.withDefaults()
	// Check --out before doing the work, so a bad path fails fast.
	var outDir, outBase string
	if opts.Out != "" {
		var err error
		outDir, outBase, err = handoffOutPath(ws, opts.Out)
		if err != nil {
			return "", HandoffReport{}, err
		}
	}
	h, err := BuildHandoff(ctx, ws, now, opts)
	if err != nil {
		return "", HandoffReport{}, err
	}
	var path string
	if opts.Out != "" {
		path = filepath.Join(outDir, outBase)
		if err := handoffCreate(path, h.Text); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return "", HandoffReport{}, fmt.Errorf("%s already exists; handoff never overwrites a file, so pass another --out path or remove it: %w", opts.Out, err)
			}
			return "", HandoffReport{}, fmt.Errorf("write handoff: %w", err)
		}
		return path, h, nil
	}
	dir := ws.HandoffsDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", HandoffReport{}, fmt.Errorf("create %s: %w", skills.RelPath(ws, dir), err)
	}
	if _, err := ws.Resolve(dir); err != nil {
		return "", HandoffReport{}, fmt.Errorf("handoffs folder: %w", err)
	}
	stem := now.Format("060102_1504") + "_handoff"
	for i := 1; i <= 1000; i++ {
		name := stem + ".md"
		if i > 1 {
			name = fmt.Sprintf("%s_%d.md", stem, i)
		}
		path = filepath.Join(dir, name)
		err := handoffCreate(path, h.Text)
		if err == nil {
			return path, h, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", HandoffReport{}, fmt.Errorf("write handoff: %w", err)
		}
	}
	return "", HandoffReport{}, fmt.Errorf("%s already holds 1000 handoffs named %s*.md; remove old ones or pass --out", skills.RelPath(ws, dir), stem)
}

// handoffOutPath checks an --out path: its folder must exist inside the
// workspace (symlinks followed); the name must not exist.
func handoffOutPath(ws *workspace.Workspace, out string) (dir, base string, err error) {
	abs := out
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(ws.Root, abs)
	}
	abs = filepath.Clean(abs)
	base = filepath.Base(abs)
	if base == "." || base == ".." || base == string(filepath.Separator) || strings.HasSuffix(out, "/") {
		return "", "", fmt.Errorf("--out %s names a folder; pass a file path such as %s", out, filepath.Join(out, "handoff.md"))
	}
	dir, err = ws.Resolve(filepath.Dir(abs))
	if err != nil {
		return "", "", fmt.Errorf("--out %s: the folder must exist inside the workspace: %w", out, err)
	}
	if _, err := os.Lstat(filepath.Join(dir, base)); err == nil {
		return "", "", fmt.Errorf("--out %s already exists; handoff never overwrites a file, so pass another path or remove it: %w", out, fs.ErrExist)
	}
	return dir, base, nil
}

// handoffCreate writes a new file, failing with fs.ErrExist if path exists
// (a symlink included).
func handoffCreate(path, text string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, werr := f.WriteString(text)
	cerr := f.Close()
	if werr != nil || cerr != nil {
		os.Remove(path)
		return errors.Join(werr, cerr)
	}
	return nil
}

// BuildHandoff gathers and renders a handoff without writing it.
func BuildHandoff(ctx context.Context, ws *workspace.Workspace, now time.Time, opts HandoffOptions) (HandoffReport, error) {
	opts = opts.withDefaults()
	doc := opts.Doc
	if doc == nil {
		var err error
		doc, err = loadDoc(ctx, ws)
		if err != nil {
			return HandoffReport{}, fmt.Errorf("load the task matrix: %w", err)
		}
	}
	h := HandoffReport{
		GeneratedAt: now.Format(time.RFC3339),
		InProgress:  []HandoffTask{}, Review: []HandoffTask{}, Blocked: []HandoffTask{},
		RecentlyDone: []HandoffTask{}, NextUp: []HandoffTask{},
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
	prio := func(p string) int {
		for i, v := range matrix.Priorities {
			if v == p {
				return i
			}
		}
		return len(matrix.Priorities)
	}
	sort.SliceStable(active, func(i, j int) bool { return prio(active[i].t.Priority) < prio(active[j].t.Priority) })
	sort.SliceStable(done, func(i, j int) bool {
		a, b := handoffTime(done[i].t.Updated), handoffTime(done[j].t.Updated)
		return a.After(b)
	})
	sort.SliceStable(todo, func(i, j int) bool {
		pi, pj := prio(todo[i].t.Priority), prio(todo[j].t.Priority)
		if pi != pj {
			return pi < pj
		}
		return handoffTime(todo[i].t.Created).Before(handoffTime(todo[j].t.Created))
	})
	for _, r := range active {
		if err := ctx.Err(); err != nil {
			return HandoffReport{}, err
		}
		ht := handoffTask(ws, r.t)
		ht.LatestNote = handoffNote(ws, ht.TaskDir, opts.NoteBytes)
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
		h.RecentlyDone = append(h.RecentlyDone, handoffTask(ws, r.t))
	}
	for _, r := range todo[:min(len(todo), opts.Next)] {
		h.NextUp = append(h.NextUp, handoffTask(ws, r.t))
	}
	h.Git = handoffGit(ctx, ws.Root, opts)
	h.Text = RenderHandoff(h, now)
	return h, nil
}

// handoffTime parses Created/Updated as written (YYYY-MM-DD[ HH:MM[:SS]]);
// an unparsable value is the zero time, so it sorts as oldest.
func handoffTime(s string) time.Time {
	for _, l := range []string{"2006-01-02", "2006-01-02 15:04", "2006-01-02 15:04:05", "2006-01-02T15:04", "2006-01-02T15:04:05", time.RFC3339} {
		if t, err := time.Parse(l, strings.TrimSpace(s)); err == nil {
			return t
		}
	}
	return time.Time{}
}

func handoffTask(ws *workspace.Workspace, t matrix.Task) HandoffTask {
	ht := HandoffTask{ID: t.ID, Status: t.Status, Priority: t.Priority, Difficulty: t.Difficulty, Mode: t.Mode,
		Agents: append([]string{}, t.Agents...), Description: t.Description, Created: t.Created, Updated: t.Updated}
	if dir, _ := ws.FindTaskDir(t.ID); dir != "" {
		ht.TaskDir = skills.RelPath(ws, dir) + "/"
	}
	return ht
}

func handoffNote(ws *workspace.Workspace, taskDir string, limit int) *HandoffNote {
	if taskDir == "" {
		return nil
	}
	td, names, err := ctxTrackingFiles(filepath.Join(ws.Root, filepath.FromSlash(taskDir)))
	if err != nil || len(names) == 0 {
		return nil
	}
	p := filepath.Join(td, names[len(names)-1])
	n := &HandoffNote{Path: skills.RelPath(ws, p)}
	if _, err := ws.Resolve(td); err != nil {
		return nil
	}
	src, err := ctxReadInside(ws, p)
	if err != nil {
		n.Content = ctxUnreadable(ws, p, err)
		return n
	}
	n.Bytes = len(src)
	if bytes.IndexByte(src[:min(len(src), 8000)], 0) >= 0 {
		n.Content = "(binary file; not shown)"
		return n
	}
	src = bytes.ReplaceAll(src, []byte("\r\n"), []byte("\n"))
	src, n.Truncated = ctxTail(src, limit)
	n.Content = promptTrimBlank(string(src))
	return n
}

// handoffGit reads the branch, uncommitted files and last commits with the
// git CLI (argv, no shell). Failures become a note, never an error.
func handoffGit(ctx context.Context, root string, opts HandoffOptions) HandoffGit {
	g := HandoffGit{Uncommitted: []HandoffGitFile{}, Commits: []HandoffGitCommit{}}
	bin, err := exec.LookPath(opts.Git)
	if err != nil {
		g.Note = fmt.Sprintf("git was not found (%s), so there is no repository information; install git or put it on PATH", ctxOneLine(err.Error()))
		return g
	}
	git := func(args ...string) (string, error) {
		cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		// -c settings keep user configuration from changing the output we parse.
		argv := append([]string{"-C", root, "-c", "log.showSignature=false", "-c", "core.quotePath=false", "-c", "color.ui=never"}, args...)
		cmd := exec.CommandContext(cctx, bin, argv...)
		cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			msg := ctxOneLine(stderr.String())
			if msg == "" {
				msg = err.Error()
			}
			return stdout.String(), fmt.Errorf("git %s: %s", strings.Join(args, " "), msg)
		}
		return stdout.String(), nil
	}
	out, err := git("rev-parse", "--is-inside-work-tree")
	if err != nil || strings.TrimSpace(out) != "true" {
		if err != nil && !strings.Contains(err.Error(), "not a git repository") {
			g.Note = "git cannot read the workspace root: " + err.Error()
		} else {
			g.Note = "The workspace root is not in a git repository."
		}
		return g
	}
	g.Repo = true
	if p, err := git("rev-parse", "--show-prefix"); err == nil {
		g.Prefix = strings.TrimSpace(p)
	}
	if b, err := git("symbolic-ref", "--short", "-q", "HEAD"); err == nil && strings.TrimSpace(b) != "" {
		g.Branch = strings.TrimSpace(b)
	} else {
		g.Detached = true
	}
	hasHead := true
	if h, err := git("rev-parse", "--verify", "-q", "--short", "HEAD"); err == nil {
		g.Head = strings.TrimSpace(h)
	} else {
		hasHead = false
	}
	var notes []string
	if st, err := git("status", "--porcelain=v1", "-z", "--untracked-files=all"); err != nil {
		notes = append(notes, err.Error())
	} else {
		files := handoffParseStatus(st)
		g.UncommittedTotal = len(files)
		g.Uncommitted = append(g.Uncommitted, files[:min(len(files), opts.GitFiles)]...)
	}
	if hasHead {
		lg, err := git("log", "-n", fmt.Sprint(HandoffCommits), "--no-color", "--date=iso-strict", "--format=%H%x1f%h%x1f%an%x1f%ad%x1f%s%x1e")
		if err != nil {
			notes = append(notes, err.Error())
		}
		for _, rec := range strings.Split(lg, "\x1e") {
			f := strings.Split(strings.TrimSpace(rec), "\x1f")
			if len(f) != 5 {
				continue
			}
			g.Commits = append(g.Commits, HandoffGitCommit{Hash: f[0], Short: f[1], Author: f[2], Date: f[3], Subject: f[4]})
		}
	} else {
		notes = append(notes, "The repository has no commits yet.")
	}
	g.Note = strings.Join(notes, " ")
	return g
}

// handoffParseStatus parses `git status --porcelain=v1 -z`: "XY path\0",
// followed by "orig\0" for renames and copies.
func handoffParseStatus(s string) []HandoffGitFile {
	files := []HandoffGitFile{}
	recs := strings.Split(s, "\x00")
	for i := 0; i < len(recs); i++ {
		r := recs[i]
		if len(r) < 4 {
			continue
		}
		f := HandoffGitFile{Status: r[:2], Path: r[3:]}
		if (r[0] == 'R' || r[0] == 'C') && i+1 < len(recs) {
			f.From = recs[i+1]
			i++
		}
		files = append(files, f)
	}
	return files
}

// RenderHandoff renders h as the Markdown of a handoff file. Same input, same bytes.
func RenderHandoff(h HandoffReport, now time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Handoff %s\n\n", now.Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&b, "Generated by `agentinfra handoff` at %s from .agent/DEVELOPMENT_MATRIX.md. Open tasks: %d in progress, %d in review, %d blocked, %d to do.\n",
		h.GeneratedAt, len(h.InProgress), len(h.Review), len(h.Blocked), h.TodoTotal)

	active := func(title string, list []HandoffTask, none string) {
		fmt.Fprintf(&b, "\n## %s (%d)\n", title, len(list))
		if len(list) == 0 {
			fmt.Fprintf(&b, "\n%s\n", none)
		}
		for _, t := range list {
			fmt.Fprintf(&b, "\n### %s: %s\n\n", t.ID, ctxOneLine(t.Description))
			fmt.Fprintf(&b, "- %s · %s · mode %s · agents %s · updated %s\n", t.Priority, t.Difficulty, handoffOrDash(t.Mode), handoffOrDash(strings.Join(t.Agents, ", ")), handoffOrDash(t.Updated))
			if t.TaskDir == "" {
				b.WriteString("- Folder: none\n")
			} else {
				fmt.Fprintf(&b, "- Folder: %s\n", t.TaskDir)
			}
			n := t.LatestNote
			switch {
			case n == nil:
				b.WriteString("- Latest note: none (no files in tracking/)\n")
			default:
				fmt.Fprintf(&b, "- Latest note: %s", n.Path)
				if n.Truncated {
					fmt.Fprintf(&b, " (its last %d of %d bytes)", len(n.Content), n.Bytes)
				}
				b.WriteString("\n\n")
				for _, line := range strings.Split(n.Content, "\n") {
					if line == "" {
						b.WriteString(">\n")
					} else {
						fmt.Fprintf(&b, "> %s\n", line)
					}
				}
			}
		}
	}
	active("In progress", h.InProgress, "No task is in progress.")
	active("In review", h.Review, "No task is waiting for review.")
	active("Blocked", h.Blocked, "No task is blocked.")

	list := func(title string, l []HandoffTask, total int, none, order string, date func(HandoffTask) string) {
		fmt.Fprintf(&b, "\n## %s\n\n", title)
		if len(l) == 0 {
			fmt.Fprintf(&b, "%s\n", none)
			return
		}
		fmt.Fprintf(&b, "%d of %d, %s.\n\n", len(l), total, order)
		for _, t := range l {
			fmt.Fprintf(&b, "- %s %s %s %s: %s (%s)\n", t.ID, t.Priority, t.Difficulty, handoffOrDash(t.Mode), ctxOneLine(t.Description), date(t))
		}
	}
	list("Recently done", h.RecentlyDone, h.DoneTotal, "No task is done yet.", "most recently updated first",
		func(t HandoffTask) string { return "updated " + handoffOrDash(t.Updated) })
	list("Next up", h.NextUp, h.TodoTotal, "Nothing to do: no TODO tasks.", "by priority, then oldest first",
		func(t HandoffTask) string { return "created " + handoffOrDash(t.Created) })

	g := h.Git
	b.WriteString("\n## Git\n\n")
	if !g.Repo {
		fmt.Fprintf(&b, "%s\n", g.Note)
		return b.String()
	}
	if g.Detached {
		fmt.Fprintf(&b, "- Branch: none (detached HEAD at %s)\n", handoffOrDash(g.Head))
	} else {
		fmt.Fprintf(&b, "- Branch: %s\n", g.Branch)
	}
	if g.Prefix != "" {
		fmt.Fprintf(&b, "- The workspace is the folder %s of the repository; paths below are relative to the repository top.\n", g.Prefix)
	}
	if g.UncommittedTotal == 0 {
		b.WriteString("- Uncommitted files: none\n")
	} else {
		fmt.Fprintf(&b, "- Uncommitted files (%d", g.UncommittedTotal)
		if g.UncommittedTotal > len(g.Uncommitted) {
			fmt.Fprintf(&b, ", showing %d", len(g.Uncommitted))
		}
		b.WriteString("):\n")
		for _, f := range g.Uncommitted {
			if f.From != "" {
				fmt.Fprintf(&b, "  - `%s` %s (from %s)\n", f.Status, f.Path, f.From)
			} else {
				fmt.Fprintf(&b, "  - `%s` %s\n", f.Status, f.Path)
			}
		}
	}
	if len(g.Commits) == 0 {
		b.WriteString("- Last commits: none\n")
	} else {
		fmt.Fprintf(&b, "- Last %d commits:\n", len(g.Commits))
		for _, c := range g.Commits {
			fmt.Fprintf(&b, "  - %s %s %s: %s\n", c.Short, c.Date, c.Author, c.Subject)
		}
	}
	if g.Note != "" {
		fmt.Fprintf(&b, "\n%s\n", g.Note)
	}
	return b.String()
}

func handoffOrDash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}
