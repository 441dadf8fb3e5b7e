package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentinfra/agentinfra/fix"
)

// runValidateFix repairs the workspace's matrix (fix.Run) and prints what it
// did, then what validate finds left in the result.
func runValidateFix(ctx context.Context, f *Factory, opts *ValidateOptions, mode fix.Mode) error {
	ws, err := f.Workspace()
	if err != nil {
		return err
	}
	rep, err := fix.Run(ctx, ws, fix.Options{
		Mode:   mode,
		DryRun: opts.DryRun,
		Now:    f.Now(),
		File:   displayPath(f.Cwd, ws.MatrixPath()),
		Getenv: f.Getenv,
		IDs:    opts.IDs,
	})
	if err != nil {
		return err
	}
	if opts.Format == "json" {
		if err := WriteJSON(f.IO.Out, fixJSON{Report: rep, Summary: rep.Summary(), Errors: rep.Errors(), Warnings: rep.Warnings()}); err != nil {
			return err
		}
	} else {
		printFixReport(f, rep)
	}
	if rep.Errors() > 0 {
		return &ExitError{Code: 1}
	}
	return nil
}

// fixJSON is the --json shape of validate --fix: the report plus its summary
// line and counts.
type fixJSON struct {
	fix.Report
	Summary  string `json:"summary"`
	Errors   int    `json:"errors"`
	Warnings int    `json:"warnings"`
}

// printFixReport prints, in this order: the diffs (dry run), the summary
// line, the problems left, the rows left for a person, and a closing count.
// A dry run's stdout is the diff alone, so that it can be piped to `git
// apply` or `patch`; the rest goes to stderr.
func printFixReport(f *Factory, rep fix.Report) {
	out := f.IO.Out
	for _, fc := range rep.Files {
		fmt.Fprint(out, fc.Diff)
	}
	if rep.DryRun {
		out = f.IO.ErrOut
	}
	fmt.Fprintln(out, rep.Summary())
	for _, d := range rep.Remaining {
		fmt.Fprintln(out, d.String())
	}
	for _, n := range rep.NotFixed {
		fmt.Fprintf(out, "not fixed: line %d: %s\n", n.Line, n.Reason)
	}
	left := "left"
	if rep.DryRun {
		left = "left after the fix"
	}
	if len(rep.Remaining) == 0 {
		fmt.Fprintf(out, "%s: no problems (%d tasks)\n", left, rep.Tasks)
		return
	}
	var tail []string
	if len(rep.NotFixed) > 0 {
		tail = append(tail, "repair the rows named above by hand, then run `agentinfra validate`")
	}
	s := fmt.Sprintf("%s: %d %s, %d %s (%d tasks)", left, rep.Errors(), Plural(rep.Errors(), "error", "errors"), rep.Warnings(), Plural(rep.Warnings(), "warning", "warnings"), rep.Tasks)
	if len(tail) > 0 {
		s += "; " + strings.Join(tail, "; ")
	}
	fmt.Fprintln(out, s)
}
