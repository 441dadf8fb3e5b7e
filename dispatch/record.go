package dispatch

// The record of a dispatch: .agent/tasks/{id}_*/tracking/{stamp}_dispatch.md,
// written before the run (what runs, with which model and why, the exact
// prompt) and completed after it, and {stamp}_result.json.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/agentrun"
	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/store"
	tasksvc "github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// renderDispatch is the tracking note written before the run: what runs, with
// which model and why, and the exact prompt.
func renderDispatch(o *Outcome, stamp string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Dispatch of %s (%s)\n\n", o.ID, stamp)
	fmt.Fprintf(&b, "- CLI: %s (%s)\n", o.CLI, mdtext.Or(o.Binary, "on $PATH"))
	fmt.Fprintf(&b, "- Mode: %s\n", mdtext.Or(o.Mode, "(none)"))
	fmt.Fprintf(&b, "- Model: %s — %s\n", mdtext.Or(o.Model, "(the CLI's default)"), o.ModelReason)
	fmt.Fprintf(&b, "- Approval mode: %s\n", o.ApprovalMode)
	fmt.Fprintf(&b, "- Session: %s\n", mdtext.Or(o.Session, "new"))
	fmt.Fprintf(&b, "- Timeout: %s\n", o.Timeout)
	fmt.Fprintf(&b, "- Status: %s → %s\n", o.StatusBefore, o.StatusAfter)
	fmt.Fprintf(&b, "- Command (secrets redacted, prompt below): `%s`\n", strings.ReplaceAll(runner.DisplayArgv(o.Argv), "`", "'"))
	if len(o.Env) > 0 {
		fmt.Fprintf(&b, "- Environment additions: `%s`\n", strings.ReplaceAll(strings.Join(o.Env, " "), "`", "'"))
	}
	if o.Stdin {
		b.WriteString("- The prompt goes to the CLI's standard input (too long for one argument).\n")
	}
	var parts []string
	for _, pp := range o.PromptParts {
		parts = append(parts, fmt.Sprintf("%s %s %d", pp.Kind, pp.Name, pp.Bytes))
	}
	fmt.Fprintf(&b, "- Prompt: %d bytes (%s)\n", o.PromptBytes, strings.Join(parts, ", "))
	for _, w := range o.Warnings {
		fmt.Fprintf(&b, "- Warning: %s\n", w)
	}
	b.WriteString("\n## Prompt\n\n")
	b.WriteString(mdtext.Fence(o.Prompt, "text"))
	return b.String()
}

// renderResult is appended to the tracking note after the run.
func renderResult(o *Outcome) string {
	r := o.Result
	var b strings.Builder
	b.WriteString("\n## Result\n\n")
	fmt.Fprintf(&b, "- Outcome: %s\n", o.Outcome)
	fmt.Fprintf(&b, "- Status: IN_PROGRESS → %s\n", mdtext.Or(o.StatusAfter, "IN_PROGRESS (could not be changed)"))
	if o.Outcome != agentrun.OutcomeSuccess && o.Reason != "" {
		// Who stopped the run and why, or what the CLI said when it failed.
		fmt.Fprintf(&b, "- Reason: %s\n", mdtext.Shorten(o.Reason, 2000))
	}
	if r != nil {
		fmt.Fprintf(&b, "- Exit code: %d\n", r.ExitCode)
		fmt.Fprintf(&b, "- Duration: %d ms\n", r.DurationMS)
		fmt.Fprintf(&b, "- Session: %s\n", mdtext.Or(r.SessionID, "(none reported)"))
		fmt.Fprintf(&b, "- Model: %s\n", mdtext.Or(r.Model, "(not reported)"))
		fmt.Fprintf(&b, "- Tokens: %d in, %d out\n", r.InputTokens, r.OutputTokens)
		fmt.Fprintf(&b, "- Tool calls: %d\n", r.ToolCalls)
		fmt.Fprintf(&b, "- Output: %d bytes stdout, %d bytes stderr\n", r.StdoutBytes, r.StderrBytes)
	}
	for _, w := range o.Warnings {
		fmt.Fprintf(&b, "- Warning: %s\n", w)
	}
	fmt.Fprintf(&b, "- Result file: %s\n", o.ResultFile)
	if r != nil {
		b.WriteString("\n### Response\n\n")
		if r.Response == "" {
			b.WriteString("(empty)\n")
		} else {
			b.WriteString(mdtext.Fence(r.Response, "text"))
		}
		if !o.resultOK() && strings.TrimSpace(r.StderrTail) != "" {
			b.WriteString("\n### stderr (tail)\n\n")
			b.WriteString(mdtext.Fence(r.StderrTail, "text"))
		}
	}
	return b.String()
}

func (o *Outcome) resultOK() bool { return o.Result != nil && o.Result.OK() }

// record is the tracking note of one dispatch, and its run's record and
// log (agentrun.Files: {stamp}_result.json holds the Outcome, the log is
// {stamp}_log.jsonl).
type record struct {
	path, stamp string
	files       agentrun.Files
	// st keeps the record as a row of the runs table too (nil when the
	// store could not be opened: the result file still holds it).
	st *store.Store
}

// recorder is the run's Recorder: the result file, and the store's row.
func (r *record) recorder() bothRecorder {
	b := bothRecorder{files: r.files}
	if r.st != nil {
		b.stored = &agentrun.Stored{Store: r.st, Doc: r.files.Doc}
	}
	return b
}

// startRecord creates the tracking note (and the task folder, when the task
// has none) and writes what is about to run.
func (p *Plan) startRecord() (*record, error) {
	path, stamp, err := newTrackingFile(p.ws, p.Task, p.TaskDir, p.At)
	if err != nil {
		return nil, err
	}
	o := &p.Outcome
	o.TrackingFile = p.ws.RelPath(path)
	if err := os.WriteFile(path, []byte(renderDispatch(o, stamp)), 0o644); err != nil {
		return nil, fmt.Errorf("write %s: %w", o.TrackingFile, err)
	}
	dir := filepath.Dir(path)
	rec := &record{path: path, stamp: stamp, files: agentrun.Files{
		RecordPath: filepath.Join(dir, stamp+"_result.json"), LogPath: filepath.Join(dir, stamp+"_log.jsonl"),
		Doc: func(*agentrun.Record) any { return o },
	}}
	o.ResultFile = p.ws.RelPath(rec.files.RecordPath)
	o.RunID, o.LogFile = p.Task.ID+"-"+stamp, p.ws.RelPath(rec.files.LogPath)
	return rec, nil
}

// finish appends the result to the note and writes the result file.
func (r *record) finish(o *Outcome) []error {
	var errs []error
	if err := appendFile(r.path, renderResult(o)); err != nil {
		errs = append(errs, fmt.Errorf("append the result to %s: %w", o.TrackingFile, err))
	}
	r.renewStore(o)
	if err := r.recorder().Save(&o.Record); err != nil {
		errs = append(errs, fmt.Errorf("write %s: %w", o.ResultFile, err))
	}
	return errs
}

// newTrackingFile creates tracking/{stamp}_dispatch.md (a new name even when
// two dispatches start in the same second), creating the task folder when the
// task has none.
func newTrackingFile(ws *workspace.Workspace, t matrix.Task, taskDir string, at time.Time) (path, stamp string, err error) {
	if taskDir == "" {
		slug := tasksvc.Slugify(t.Description)
		if slug == "" {
			slug = "task"
		}
		taskDir = filepath.Join(ws.TasksDir(), t.ID+"_"+slug)
		for _, sub := range []string{"tracking", "artifacts"} {
			if err := os.MkdirAll(filepath.Join(taskDir, sub), 0o755); err != nil {
				return "", "", fmt.Errorf("create the task folder: %w", err)
			}
		}
	}
	dir := filepath.Join(taskDir, "tracking")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", fmt.Errorf("create %s: %w", ws.RelPath(dir), err)
	}
	base := at.UTC().Format("20060102T150405Z")
	for i := 1; i < 1000; i++ {
		stamp = base
		if i > 1 {
			stamp = fmt.Sprintf("%s-%d", base, i)
		}
		path = filepath.Join(dir, stamp+"_dispatch.md")
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", "", fmt.Errorf("create %s: %w", ws.RelPath(path), err)
		}
		return path, stamp, f.Close()
	}
	return "", "", fmt.Errorf("too many dispatches of %s at %s", t.ID, base)
}

func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// renewStore writes the run's end to the database now at the store's path
// when the one the run opened was deleted or replaced meanwhile (a fresh
// one is created where there is none): the run's row then says what its
// result file and its task say, where every later command reads it.
func (r *record) renewStore(o *Outcome) {
	if r.st == nil {
		return
	}
	lost := r.st.LostNote()
	if lost == "" {
		return
	}
	fresh, err := store.Open(context.Background(), r.st.Path(), store.Options{})
	if err != nil {
		o.Warnings = append(o.Warnings, "the run's record is only in its result file: "+err.Error())
		return
	}
	r.st.Close()
	r.st = fresh
	o.Warnings = append(o.Warnings, lost)
}
