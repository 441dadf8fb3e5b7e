package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/internal/termsafe"
	"github.com/agentinfra/agentinfra/review"
	"github.com/agentinfra/agentinfra/workspace"
)

// ReviewShowOptions is what `review show` runs with.
type ReviewShowOptions struct {
	IO        *IOStreams
	Workspace func() (*workspace.Workspace, error)
	Now       func() time.Time
	Getenv    func(string) string

	ID   string
	Stat bool
	JSON bool
}

func NewCmdReviewShow(f *Factory, runF func(context.Context, *ReviewShowOptions) error) *cobra.Command {
	o := &ReviewShowOptions{IO: f.IO, Workspace: f.Workspace, Now: f.Now, Getenv: f.Getenv}
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show a task's change: its commits, checks, the run's summary, the review so far, and git's diff",
		Long: `show prints a task's change: the agent and its run, the branch and the base the work
started from, its commits, its checks, the run's summary and final message, the task
README's Review section (the comments so far), then the change against its base as
git diff prints it (--stat: git's diffstat).

On a terminal the diff is coloured, and what the agent wrote is made inert: control
characters and the bidi and zero-width characters that could hide or reorder code are
shown as escapes. Piped, the diff is git's bytes (a patch git apply takes).`,
		Example: `  agentinfra review show 3f9a2c
  agentinfra review show 3f9a2c --stat
  agentinfra review show 3f9a2c | less -R
  agentinfra review show 3f9a2c --json | jq -r .diff`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: CompleteTaskIDs(f, "REVIEW"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ID = args[0]
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return reviewShowRun(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.Stat, "stat", false, "git's diffstat instead of the patch")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print {task, change, files, added, deleted, checks, age_seconds, stat, review, diff} as JSON")
	return cmd
}

func reviewShowRun(ctx context.Context, o *ReviewShowOptions) error {
	svc, _, err := reviewService(o.Workspace, o.Now)
	if err != nil {
		return err
	}
	d, err := svc.Show(ctx, o.ID)
	if err != nil {
		return err
	}
	if o.JSON {
		var diff bytes.Buffer
		if err := svc.Diff(ctx, o.ID, &diff, review.DiffOptions{Stat: o.Stat}); err != nil {
			return err
		}
		return WriteJSON(o.IO.Out, struct {
			review.Detail
			Diff string `json:"diff"`
		}{d, diff.String()})
	}
	color := useColor(o.IO, o.Getenv)
	printChange(o.IO.Out, d, color)
	fmt.Fprintln(o.IO.Out)
	var out io.Writer = o.IO.Out
	var lw *diffWriter
	if o.IO.IsTTY {
		lw = &diffWriter{w: o.IO.Out, color: color}
		out = lw
	}
	if err := svc.Diff(ctx, o.ID, out, review.DiffOptions{Stat: o.Stat, Width: o.IO.Width}); err != nil {
		return err
	}
	if lw != nil {
		return lw.Flush()
	}
	return nil
}

// printChange prints the change's header: what a reviewer reads before
// the diff.
func printChange(w io.Writer, d review.Detail, color bool) {
	c := d.Change
	field := func(k, v string) { fmt.Fprintf(w, "%-9s %s\n", k+":", v) }
	field("Task", fmt.Sprintf("%s %s (%s)", d.Task.ID, termsafe.Line(reviewTitle(d.Task.Description)), d.Task.Status))
	agent := "@" + c.Agent
	if c.Run != "" {
		agent += ", run " + c.Run
	}
	field("Agent", termsafe.Line(agent))
	field("Branch", termsafe.Line(fmt.Sprintf("%s → %s, from %s", c.Branch, c.BaseBranch, reviewShort(c.Base))))
	field("Size", fmt.Sprintf("%d file(s), +%d −%d", d.Files, d.Added, d.Deleted))
	state := c.State
	if len(c.Conflict) > 0 && c.State == review.StateConflict {
		state += ": " + termsafe.Line(strings.Join(c.Conflict, ", "))
	}
	if l := c.Landed; l != nil {
		state += fmt.Sprintf(" as %s (%s)", reviewShort(l.Commit), l.Strategy)
	}
	field("State", state)
	field("Checks", checksLine(d))
	fmt.Fprintf(w, "Commits (%d):\n", len(c.Commits))
	for _, cm := range c.Commits {
		fmt.Fprintf(w, "  %s %s (%s)\n", colorize(color, "33", reviewShort(cm.Hash)), termsafe.Line(cm.Subject), termsafe.Line(cm.Author))
	}
	if c.Summary != "" {
		fmt.Fprintf(w, "Summary:\n%s\n", reviewIndent(termsafe.Line(c.Summary)))
	}
	if c.FinalMessage != "" {
		fmt.Fprintf(w, "Final message:\n%s\n", reviewIndent(reviewText(c.FinalMessage)))
	}
	if len(d.Review) > 0 {
		fmt.Fprintln(w, "Review:")
		for _, r := range d.Review {
			fmt.Fprintln(w, reviewIndent(reviewText(r)))
		}
	}
	if c.Checks != nil {
		for _, r := range c.Checks.Results {
			if !r.Passed && r.Output != "" {
				fmt.Fprintf(w, "Output of %s:\n%s\n", termsafe.Line(r.Command), reviewIndent(reviewText(reviewLastLines(r.Output, 15))))
			}
		}
	}
}

// checksLine is the checks' state and, when they ran, each one's outcome.
func checksLine(d review.Detail) string {
	line := d.Checks
	if r := d.Change.Checks; r != nil && d.Checks != review.ChecksNotRun && d.Checks != review.ChecksNone {
		var each []string
		for _, x := range r.Results {
			each = append(each, fmt.Sprintf("%s: %s", x.Command, x.Outcome()))
		}
		line += " (" + termsafe.Line(strings.Join(each, "; ")) + ")"
	}
	return line
}

func reviewShort(h string) string {
	if len(h) > 10 {
		return h[:10]
	}
	return h
}

// reviewText is multi-line text an agent wrote, inert for a terminal
// (termsafe.Text), without its trailing newlines.
func reviewText(s string) string { return termsafe.Text(strings.TrimRight(s, "\n")) }

func reviewIndent(s string) string { return "  " + strings.ReplaceAll(s, "\n", "\n  ") }

// lastLines is the last n lines of s.
func reviewLastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// diffWriter shows git's diff on a terminal: each line made inert, then
// coloured by what git's first characters say it is.
type diffWriter struct {
	w       io.Writer
	color   bool
	partial []byte
	err     error
}

func (d *diffWriter) Write(p []byte) (int, error) {
	d.partial = append(d.partial, p...)
	for {
		i := bytes.IndexByte(d.partial, '\n')
		if i < 0 {
			break
		}
		d.line(string(d.partial[:i]))
		d.partial = d.partial[i+1:]
	}
	return len(p), d.err
}

// Flush writes a last line without a newline.
func (d *diffWriter) Flush() error {
	if len(d.partial) > 0 {
		d.line(string(d.partial))
		d.partial = nil
	}
	return d.err
}

func (d *diffWriter) line(l string) {
	if d.err != nil {
		return
	}
	code := ""
	switch {
	case strings.HasPrefix(l, "diff --git "), strings.HasPrefix(l, "index "), strings.HasPrefix(l, "+++ "), strings.HasPrefix(l, "--- "),
		strings.HasPrefix(l, "new file mode"), strings.HasPrefix(l, "deleted file mode"):
		code = "1"
	case strings.HasPrefix(l, "@@"):
		code = "36"
	case strings.HasPrefix(l, "+"):
		code = "32"
	case strings.HasPrefix(l, "-"):
		code = "31"
	}
	_, d.err = fmt.Fprintln(d.w, colorize(d.color, code, termsafe.Text(l)))
}
