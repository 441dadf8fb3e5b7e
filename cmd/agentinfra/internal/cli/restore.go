package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/internal/textdiff"
	"github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// restoreOutput is the --json shape of restore.
type restoreOutput struct {
	File string `json:"file"`
	// Previous is the file that holds the previous version.
	Previous string `json:"previous"`
	DryRun   bool   `json:"dry_run"`
	// Changed is false when the two versions are the same.
	Changed bool `json:"changed"`
	// Diff turns the matrix as it is into the previous version.
	Diff     string   `json:"diff"`
	Warnings []string `json:"warnings"`
}

// RestoreOptions is what `restore` runs with.
type RestoreOptions struct {
	IO        *IOStreams
	Workspace func() (*workspace.Workspace, error)

	DryRun bool
	JSON   bool
}

func NewCmdRestore(f *Factory, runF func(context.Context, *RestoreOptions) error) *cobra.Command {
	o := &RestoreOptions{IO: f.IO, Workspace: f.Workspace}
	cmd := &cobra.Command{
		Use:   "restore [--dry-run] [--json]",
		Short: "Put back the matrix as it was before the last write",
		Long: `Every write of the matrix keeps the file it replaced as .agent/.DEVELOPMENT_MATRIX.md.prev
(git-ignored): the matrix as it was before agentinfra's last change, or as an editor
had saved it. restore puts that version back, under the matrix lock like any write;
the version it replaces becomes the previous version in turn, so running restore
again undoes it. --dry-run prints what restoring would change, as a unified diff
from the matrix as it is to the previous version, and writes nothing.

Use it when an edit was lost: a change made in an editor while agentinfra wrote the
file. agentinfra checks for such a change just before every write and starts again
from the editor's version, so this is rare; when a write notices that an editor
saved into the old file after it was replaced, it keeps that version aside as
.agent/.DEVELOPMENT_MATRIX.md.recovered-DATE-N and says so.`,
		Example: `  agentinfra restore --dry-run     # what the previous version differs in
  agentinfra restore               # put it back
  agentinfra restore               # again: undo the restore`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return restoreRun(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.DryRun, "dry-run", false, "print what restoring would change as a unified diff and write nothing")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print {file, previous, dry_run, changed, diff, warnings} as JSON")
	return cmd
}

func restoreRun(ctx context.Context, o *RestoreOptions) error {
	ws, err := o.Workspace()
	if err != nil {
		return err
	}
	var r task.Restored
	if o.DryRun {
		r, err = task.PreviousVersion(ctx, ws)
	} else {
		r, err = task.RestorePrevious(ctx, ws)
	}
	if err != nil {
		return err
	}
	store, err := task.OpenStore(ws)
	if err != nil {
		return err
	}
	out := restoreOutput{File: rel(ws, ws.MatrixPath()), Previous: rel(ws, store.PrevPath()), DryRun: o.DryRun,
		Changed: string(r.Current) != string(r.Previous), Warnings: append([]string{}, r.Warnings...)}
	if out.Diff, err = textdiff.Diff(out.File, string(r.Current), string(r.Previous)); err != nil {
		return err
	}
	if o.JSON {
		return WriteJSON(o.IO.Out, out)
	}
	PrintWarnings(o.IO, out.Warnings)
	switch {
	case !out.Changed:
		fmt.Fprintf(o.IO.Out, "the previous version (%s) is the same as %s: nothing to restore\n", out.Previous, out.File)
	case o.DryRun:
		fmt.Fprint(o.IO.Out, out.Diff)
		fmt.Fprintf(o.IO.ErrOut, "dry run: restoring would make these changes to %s; nothing was written\nrun `agentinfra restore` to write them\n", out.File)
	default:
		fmt.Fprintf(o.IO.Out, "restored the previous version of %s; the version it replaced is now %s (run `agentinfra restore` again to undo)\n", out.File, out.Previous)
	}
	return nil
}
