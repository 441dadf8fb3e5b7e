// Package handoff writes the note one working session leaves for the next:
// the tasks in progress, in review and blocked (each with the end of its
// latest tracking note), the recently done, what is next up by priority, and
// the git state (branch, uncommitted files, last commits). Build gathers and
// renders it; Write also creates .agent/handoffs/{YYMMDD_HHMM}_handoff.md,
// never overwriting a file.
//
// handoff reads the matrix and never changes a task.
package handoff

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/workspace"
)

// Default bounds of a handoff (see Options).
const (
	DefaultDone      = 10
	DefaultNext      = 10
	DefaultNoteBytes = 800
	DefaultGitFiles  = 50
	Commits          = 5
)

// Options configures Handoff. Zero values mean the defaults.
type Options struct {
	// Doc is the parsed matrix; nil means load ws.MatrixPath().
	Doc *matrix.Doc
	// Out is where to write instead of .agent/handoffs/{YYMMDD_HHMM}_handoff.md:
	// a path relative to the workspace root or absolute, whose folder must be
	// inside the workspace. An existing file is refused.
	Out string
	// Done bounds "recently done" (default DefaultDone).
	Done int
	// Next bounds "next up" (default DefaultNext).
	Next int
	// NoteBytes bounds each latest tracking note; longer notes keep their end.
	NoteBytes int
	// GitFiles bounds the list of uncommitted files (default DefaultGitFiles).
	GitFiles int
	// Git is the git binary (default "git", looked up on PATH).
	Git string
}

func (o Options) withDefaults() Options {
	if o.Done <= 0 {
		o.Done = DefaultDone
	}
	if o.Next <= 0 {
		o.Next = DefaultNext
	}
	if o.NoteBytes <= 0 {
		o.NoteBytes = DefaultNoteBytes
	}
	if o.GitFiles <= 0 {
		o.GitFiles = DefaultGitFiles
	}
	if o.Git == "" {
		o.Git = "git"
	}
	return o
}

// Report is the structured content of a handoff file. Lists are never nil.
type Report struct {
	GeneratedAt string `json:"generated_at"` // RFC 3339
	InProgress  []Task `json:"in_progress"`
	Review      []Task `json:"review"`
	Blocked     []Task `json:"blocked"`
	// RecentlyDone is DONE tasks, most recently updated first, at most Done of DoneTotal.
	RecentlyDone []Task `json:"recently_done"`
	DoneTotal    int    `json:"done_total"`
	// NextUp is TODO tasks by priority, then oldest Created first, at most Next of TodoTotal.
	NextUp    []Task `json:"next_up"`
	TodoTotal int    `json:"todo_total"`
	Git       Git    `json:"git"`
	// Text is the Markdown written to the file.
	Text string `json:"text"`
}

// Task is one task in a handoff.
type Task struct {
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
	LatestNote *Note `json:"latest_note"`
}

// Note is the end of a task's latest tracking file.
type Note struct {
	Path      string `json:"path"`
	Bytes     int    `json:"bytes"`
	Truncated bool   `json:"truncated"` // Content is only the last NoteBytes bytes
	Content   string `json:"content"`
}

// Git is the git state of the workspace root.
type Git struct {
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
	Uncommitted      []GitFile   `json:"uncommitted"`
	UncommittedTotal int         `json:"uncommitted_total"`
	Commits          []GitCommit `json:"commits"` // the last five, newest first
}

// GitFile is one line of git status.
type GitFile struct {
	Status string `json:"status"` // the two-letter XY code, e.g. " M", "??", "R "
	Path   string `json:"path"`
	From   string `json:"from"` // the original path of a rename or copy
}

// GitCommit is one commit of git log.
type GitCommit struct {
	Hash    string `json:"hash"`
	Short   string `json:"short"`
	Author  string `json:"author"`
	Date    string `json:"date"` // author date, ISO 8601
	Subject string `json:"subject"`
}

// Write writes a handoff note of the workspace state at now and returns its
// absolute path and content. By default it creates
// .agent/handoffs/{YYMMDD_HHMM}_handoff.md, adding _2, _3, ... to the name
// when that file exists (files are created with O_EXCL, so a handoff is never
// overwritten). With opts.Out it writes there instead, refusing a folder
// outside the workspace and an existing file.
func Write(ctx context.Context, ws *workspace.Workspace, now time.Time, opts Options) (string, Report, error) {
	opts = opts.withDefaults()
	// Check --out before doing the work, so a bad path fails fast.
	var outDir, outBase string
	if opts.Out != "" {
		var err error
		outDir, outBase, err = outPath(ws, opts.Out)
		if err != nil {
			return "", Report{}, err
		}
	}
	h, err := Build(ctx, ws, now, opts)
	if err != nil {
		return "", Report{}, err
	}
	var path string
	if opts.Out != "" {
		path = filepath.Join(outDir, outBase)
		if err := createNew(path, h.Text); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return "", Report{}, fmt.Errorf("%s already exists; handoff never overwrites a file, so pass another --out path or remove it: %w", opts.Out, err)
			}
			return "", Report{}, fmt.Errorf("write handoff: %w", err)
		}
		return path, h, nil
	}
	dir := ws.HandoffsDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", Report{}, fmt.Errorf("create %s: %w", ws.RelPath(dir), err)
	}
	if _, err := ws.Resolve(dir); err != nil {
		return "", Report{}, fmt.Errorf("handoffs folder: %w", err)
	}
	stem := now.Format("060102_1504") + "_handoff"
	for i := 1; i <= 1000; i++ {
		name := stem + ".md"
		if i > 1 {
			name = fmt.Sprintf("%s_%d.md", stem, i)
		}
		path = filepath.Join(dir, name)
		err := createNew(path, h.Text)
		if err == nil {
			return path, h, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", Report{}, fmt.Errorf("write handoff: %w", err)
		}
	}
	return "", Report{}, fmt.Errorf("%s already holds 1000 handoffs named %s*.md; remove old ones or pass --out", ws.RelPath(dir), stem)
}

// outPath checks an --out path: its folder must exist inside the
// workspace (symlinks followed); the name must not exist.
func outPath(ws *workspace.Workspace, out string) (dir, base string, err error) {
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

// createNew writes a new file, failing with fs.ErrExist if path exists
// (a symlink included).
func createNew(path, text string) error {
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
