package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/internal/textdiff"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// migrateOutput is the --json shape of migrate.
type migrateOutput struct {
	File   string `json:"file"`
	DryRun bool   `json:"dry_run"`
	matrix.Migration
	// Diff is the unified diff of the change (--dry-run only).
	Diff string `json:"diff,omitempty"`
}

// MigrateOptions is what `migrate` runs with.
type MigrateOptions struct {
	IO        *IOStreams
	Workspace func() (*workspace.Workspace, error)
	Now       func() time.Time

	DryRun bool
	JSON   bool
	// AddColumns, when set, adds the standard columns the task tables
	// lack instead of converting Item tables; Columns names them (empty:
	// every standard column).
	AddColumns bool
	Columns    []string
}

func NewCmdMigrate(f *Factory, runF func(context.Context, *MigrateOptions) error) *cobra.Command {
	o := &MigrateOptions{IO: f.IO, Workspace: f.Workspace, Now: f.Now}
	var addCols string
	cmd := &cobra.Command{
		Use:   "migrate [--dry-run] [--json] [--add-columns[=COL,...]]",
		Short: "Convert an older matrix (Item tables, no IDs) into one task table, or add missing standard columns",
		Long: `migrate converts a matrix in the older hand-written format — legend tables, then one
table per priority section headed | Item | Priority | Difficulty | Backlog | Description |
with no ID or Status column — into ONE task table with the canonical columns
(ID | Status | Pri | Diff | Mode | Skills | Agents | Description | Created | Updated).

The task table takes the place of the first Item table; the other Item tables are
removed; every other byte of the file (prose, headings, legend tables, code blocks)
is kept. Each item gets:
  ID           a new random ID
  Status       DONE when the Item or another cell is marked done (✅ ✔ [x] DONE done x,
               or the Item struck through ~~like this~~, or the table is under a
               heading such as ## Done or ## ✅ Completed), else TODO
  Pri          the Priority cell, else the section heading above the table (## P1,
               ## High priority); P0 reads as P1; critical P1, high P2, medium P3, low P4
  Diff         the Difficulty cell through the file's Size legend (by its words, or the
               time it names: under 4 hours easy, under a day med, more hard), else
               S easy, M med, L and XL hard
  Description  Item — Description, the done markers stripped and nothing else
  Created, Updated  today
A column such as Backlog is kept as an extra column when any of its cells holds more
than a done marker. See docs/matrix-format.md.

The priority of a table with no Priority cells comes from the headings it is under,
the nearest that names one ("### Feature Enhancements" under "## P2 — Important" is
P2). Rows below a blank line after their header, or a section's rows with no header,
are read with the header of the Item table above. Placeholder rows ("(None
currently)", "None", "—") are skipped; an item a summary table repeats ("Quick
Reference: P1 Items") is merged into one task (DONE if either copy is); a marker the
file's legend defines ("✅ = complete", "🚧 = in progress") counts anywhere in the row.

On a file that has a task table and no Item table it says "nothing to migrate" (exit 0).
It refuses, writing nothing, when the matrix has a task table and Item tables, has no
Item table, holds a value it cannot map (the message lists them), or has item rows it
cannot give columns to (it names their lines). It writes under the
matrix lock with an atomic replace. --dry-run prints the change as a unified diff and
writes nothing.

--add-columns adds the standard columns (ID | Status | Pri | Diff | Mode | Skills |
Agents | Description | Created | Updated) that the task tables lack, each where the
standard header has it, with an empty cell in every row; --add-columns=Agents,Skills
adds only those. An Agents column added gets the holder of each IN_PROGRESS task that
a claim recorded in its README (on a matrix without the column, claims are recorded
there). Only the new cells are new bytes. Rows that go on over several lines must be
joined first (agentinfra validate --fix). With nothing to add it changes nothing.`,
		Example: `  agentinfra migrate --dry-run          # see the change first
  agentinfra migrate --dry-run | less
  agentinfra migrate                    # convert; then check it:
  agentinfra validate && agentinfra task list --status TODO
  agentinfra migrate --json             # {file, migrated, ids, table_line, ...}
  agentinfra migrate --add-columns --dry-run     # which standard columns are missing, as a diff
  agentinfra migrate --add-columns=Agents        # add the Agents column (holders from the READMEs)`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("add-columns") {
				o.AddColumns = true
				if addCols != "all" {
					for _, c := range strings.Split(addCols, ",") {
						name := matrix.CanonicalColumn(c)
						if name == "" {
							return UsageErrorf("--add-columns=%s: %q is not a standard column; valid: %s", addCols, strings.TrimSpace(c), strings.Join(matrix.CanonicalColumns, ", "))
						}
						o.Columns = append(o.Columns, name)
					}
				}
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return migrateRun(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&addCols, "add-columns", "", "add the standard columns the task tables lack (all, or a comma-separated list)")
	cmd.Flags().Lookup("add-columns").NoOptDefVal = "all"
	cmd.Flags().BoolVar(&o.DryRun, "dry-run", false, "print the change as a unified diff and write nothing")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print {file, dry_run, migrated, ids, table_line, item_tables, done, todo, kept_columns, no_priority, diff} as JSON")
	return cmd
}

func migrateRun(ctx context.Context, o *MigrateOptions) error {
	ws, err := o.Workspace()
	if err != nil {
		return err
	}
	if o.AddColumns {
		return addColumnsRun(ctx, o, ws)
	}
	out := migrateOutput{File: rel(ws, ws.MatrixPath()), DryRun: o.DryRun}
	if o.DryRun {
		// A dry run takes no lock: like any reader, it sees the old or
		// the new file whole.
		d, err := matrix.NewStore(ws.MatrixPath()).Load(ctx)
		if err != nil {
			return err
		}
		old := string(d.Bytes())
		if out.Migration, err = d.Migrate(o.Now()); err != nil {
			return err
		}
		if out.Diff, err = textdiff.Diff(out.File, old, string(d.Bytes())); err != nil {
			return err
		}
	} else if out.Migration, err = task.Migrate(ctx, ws, o.Now()); err != nil {
		return err
	}
	if o.JSON {
		return WriteJSON(o.IO.Out, out)
	}
	if out.AlreadyMigrated {
		fmt.Fprintf(o.IO.ErrOut, "nothing to migrate: %s has a task table (line %d) and no older-format Item table\n", out.File, out.TableLine)
		return nil
	}
	if o.DryRun {
		fmt.Fprint(o.IO.Out, out.Diff)
		fmt.Fprintf(o.IO.ErrOut, "dry run: would %s; nothing was written\nrun `agentinfra migrate` to write it\n", summarizeMigration(out))
		return nil
	}
	fmt.Fprintf(o.IO.Out, "%s\nnext: agentinfra validate; agentinfra task list\n", summarizeMigration(out))
	return nil
}

// summarizeMigration says what migrate did, or would do, in one sentence
// ("migrated ..." / "would migrate ..." after the caller's prefix).
func summarizeMigration(o migrateOutput) string {
	m := o.Migration
	verb := "migrated"
	if o.DryRun {
		verb = "migrate"
	}
	other := ""
	if m.Other > 0 {
		other = fmt.Sprintf(", %d in another status", m.Other)
	}
	s := fmt.Sprintf("%s %d items (%d DONE, %d TODO%s) from %d Item %s into one task table at line %d of %s",
		verb, m.Migrated, m.Done, m.Todo, other, len(m.ItemTables), mdtext.Plural(len(m.ItemTables), "table", "tables"), m.TableLine, o.File)
	if len(m.KeptColumns) > 0 {
		s += fmt.Sprintf("; kept %s as extra %s", strings.Join(m.KeptColumns, ", "), mdtext.Plural(len(m.KeptColumns), "column", "columns"))
	}
	if m.NoPriority > 0 {
		s += fmt.Sprintf("; %d %s no priority (no Priority cell, no priority in the headings above)", m.NoPriority, mdtext.Plural(m.NoPriority, "item has", "items have"))
	}
	if m.Headerless > 0 {
		s += fmt.Sprintf("; %d %s with the header of the Item table above (a blank line after the header, or none)", m.Headerless, mdtext.Plural(m.Headerless, "item row was read", "item rows were read"))
	}
	if n := len(m.Merged); n > 0 {
		var lines []string
		for _, g := range m.Merged {
			lines = append(lines, fmt.Sprintf("line %d into line %d", g.Line, g.Into))
		}
		s += fmt.Sprintf("; merged %d %s another item (%s)", n, mdtext.Plural(n, "row that repeats", "rows that repeat"), strings.Join(lines, ", "))
	}
	if n := len(m.Placeholders); n > 0 {
		var lines []string
		for _, l := range m.Placeholders {
			lines = append(lines, fmt.Sprint(l))
		}
		s += fmt.Sprintf("; skipped %d placeholder %s such as \"(None currently)\" (%s %s)", n, mdtext.Plural(n, "row", "rows"), mdtext.Plural(n, "line", "lines"), strings.Join(lines, ", "))
	}
	return s
}

// addColumnsOutput is the --json shape of migrate --add-columns.
type addColumnsOutput struct {
	File   string                `json:"file"`
	DryRun bool                  `json:"dry_run"`
	Tables []matrix.TableColumns `json:"tables"`
	Diff   string                `json:"diff,omitempty"`
}

func addColumnsRun(ctx context.Context, o *MigrateOptions, ws *workspace.Workspace) error {
	res, err := task.AddColumns(ctx, ws, o.Columns, o.DryRun)
	if err != nil {
		return err
	}
	out := addColumnsOutput{File: rel(ws, ws.MatrixPath()), DryRun: o.DryRun, Tables: res.Tables}
	if out.Tables == nil {
		out.Tables = []matrix.TableColumns{}
	}
	if o.DryRun {
		if out.Diff, err = textdiff.Diff(out.File, string(res.Before), string(res.After)); err != nil {
			return err
		}
	}
	if o.JSON {
		return WriteJSON(o.IO.Out, out)
	}
	if len(res.Tables) == 0 {
		fmt.Fprintf(o.IO.ErrOut, "nothing to add: the task tables of %s have the columns asked for\n", out.File)
		return nil
	}
	verb, w := "added", o.IO.Out
	if o.DryRun {
		fmt.Fprint(o.IO.Out, out.Diff)
		verb, w = "would add", o.IO.ErrOut
	}
	for _, t := range res.Tables {
		msg := fmt.Sprintf("%s %s to the task table at line %d of %s", verb, strings.Join(t.Added, ", "), t.Line, out.File)
		if t.Filled > 0 {
			msg += fmt.Sprintf(" (%d %s the holder its README recorded)", t.Filled, mdtext.Plural(t.Filled, "row gets", "rows get"))
		}
		fmt.Fprintln(w, msg)
	}
	if o.DryRun {
		fmt.Fprintln(w, "dry run: nothing was written; run `agentinfra migrate --add-columns` to write it")
	}
	return nil
}
