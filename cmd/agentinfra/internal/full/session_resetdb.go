package full

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
	"github.com/agentinfra/agentinfra/supervision"
	"github.com/agentinfra/agentinfra/workspace"
)

// ResetDBOptions is what `session reset-db` runs with.
type ResetDBOptions struct {
	IO        *cli.IOStreams
	Workspace func() (*workspace.Workspace, error)
	Now       func() time.Time

	Force bool
	JSON  bool
}

// newCmdSessionResetDB is `session reset-db [--force]`: the recovery step
// of a damaged database. It opens no store first (that is what fails).
func newCmdSessionResetDB(f *Factory, runF func(context.Context, *ResetDBOptions) error) *cobra.Command {
	o := &ResetDBOptions{IO: f.IO, Workspace: f.Workspace, Now: f.Now}
	cmd := &cobra.Command{
		Use:   "reset-db",
		Short: "Move a damaged supervision database aside and start a fresh one",
		Long: `The supervision database (.agent/state/agentinfra.db) keeps the sessions,
requests, decisions and the audit log. When SQLite cannot read it (a command
says "the database ... is damaged"), reset-db renames it (with its WAL) to
agentinfra.db.broken-STAMP beside it, for inspection, and creates a fresh,
empty one: the sessions and requests of the old one are not carried over;
the tasks, their tracking notes and result files are files and stay.

A database that opens and passes SQLite's quick check is refused unless
--force. Stop the supervised runs first: a run whose database is moved away
notices it and ends, its task BLOCKED.`,
		Example: `  agentinfra session reset-db
  agentinfra session reset-db --force --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return resetDBRun(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.Force, "force", false, "reset a database that is not damaged too (its sessions are thrown away)")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print {database, moved_to} as JSON")
	return cmd
}

func resetDBRun(ctx context.Context, o *ResetDBOptions) error {
	ws, err := o.Workspace()
	if err != nil {
		return err
	}
	path, aside, err := supervision.ResetDB(ctx, ws, o.Force, o.Now())
	if err != nil {
		return err
	}
	if o.JSON {
		return cli.WriteJSON(o.IO.Out, map[string]string{"database": path, "moved_to": aside})
	}
	if aside != "" {
		fmt.Fprintf(o.IO.Out, "Moved %s aside to %s.\n", ws.RelPath(path), ws.RelPath(aside))
	}
	fmt.Fprintf(o.IO.Out, "A fresh database is at %s: the sessions and requests of the old one are not in it.\n", ws.RelPath(path))
	return nil
}
