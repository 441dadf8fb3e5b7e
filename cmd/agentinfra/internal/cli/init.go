package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/internal/jsonout"
	"github.com/agentinfra/agentinfra/internal/stateignore"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// InitOptions is what `init` runs with.
type InitOptions struct {
	IO *IOStreams

	// Dir is where .agent/ goes: --root, else $AGENTINFRA_ROOT, else the
	// current folder (init creates a workspace; it does not look for one).
	Dir  string
	JSON bool
}

func NewCmdInit(f *Factory, runF func(context.Context, *InitOptions) error) *cobra.Command {
	o := &InitOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Create .agent/ (matrix, task folders, starter agent modes, template) in the workspace root",
		Long: `init creates .agent/ in the workspace root (--root, else $AGENTINFRA_ROOT, else the
current folder) with DEVELOPMENT_MATRIX.md, tasks/, archive/, skills/, agents/ holding
starter modes (coder, reviewer, oracle, explorer) and templates/unified_task.md.

It never overwrites a file that exists, so it is safe to run again: it creates only
what is missing and lists what it created.

In a git repository it also registers the matrix's merge driver, which merges the
matrix by task ID instead of line by line (see 'agentinfra merge-driver --help'): the
line '.agent/DEVELOPMENT_MATRIX.md merge=agentinfra' in .gitattributes (commit it) and
this clone's git config merge.agentinfra.*. Other clones register it with 'agentinfra
hook install'.

An existing matrix with no task table (a table whose header has ID and Status
columns) is not ready: init says so, and what to run, and exits 1. A matrix in the
older Item format is converted with 'agentinfra migrate'.`,
		Example: `  agentinfra init
  agentinfra init --root ~/src/myrepo
  agentinfra init --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Dir = f.Root
			if o.Dir == "" && f.Getenv != nil {
				o.Dir = f.Getenv(workspace.EnvRoot)
			}
			if o.Dir == "" {
				o.Dir = f.Cwd
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return initRun(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print {root, created} as JSON")
	return cmd
}

func initRun(ctx context.Context, o *InitOptions) error {
	ws, err := workspace.New(o.Dir)
	if err != nil {
		return err
	}
	created, err := task.Init(ctx, ws.Root)
	var notReady error // the matrix init found has no task table
	var merge []string // what registering the merge driver changed
	if err == nil {
		self, _ := os.Executable()
		if merge, err = registerMergeDriver(ctx, ws.Root, self); err != nil {
			err = fmt.Errorf("register the matrix's merge driver: %w", err)
		}
	}
	if err == nil {
		notReady = unusableMatrix(ws.MatrixPath())
		if made, ierr := stateignore.Fleet(ws.AgentDir()); made { // the fleet's state stays out of git
			created = append(created, ".agent/fleet/.gitignore")
		} else if ierr != nil {
			err = ierr
		}
		if made, ierr := stateignore.State(ws.AgentDir()); made { // and so does the supervision database
			created = append(created, ".agent/state/.gitignore")
		} else if ierr != nil && err == nil {
			err = ierr
		}
	}
	if o.JSON {
		if err != nil {
			return err
		}
		out := struct {
			Root    string   `json:"root"`
			Created []string `json:"created"`
			Ready   bool     `json:"ready"`
			Problem string   `json:"problem,omitempty"`
			// MergeDriver says what registering the matrix's merge driver changed.
			MergeDriver []string `json:"merge_driver"`
		}{Root: ws.Root, Created: created, Ready: notReady == nil, MergeDriver: append([]string{}, merge...)}
		if notReady != nil {
			out.Problem = notReady.Error()
		}
		if err := jsonout.Write(o.IO.Out, out); err != nil {
			return err
		}
		if notReady != nil {
			return &ExitError{Code: 1}
		}
		return nil
	}
	for _, c := range created {
		fmt.Fprintln(o.IO.Out, "created", c)
	}
	for _, m := range merge {
		fmt.Fprintln(o.IO.Out, m)
	}
	if err != nil {
		return err
	}
	if notReady != nil {
		return &ExitError{Code: 1, Msg: fmt.Sprintf("the workspace in %s is not ready: .agent/DEVELOPMENT_MATRIX.md exists and init never overwrites it, but %v", ws.Root, notReady)}
	}
	if len(created) == 0 && len(merge) == 0 {
		fmt.Fprintf(o.IO.Out, "nothing to do: %s/.agent is complete\n", ws.Root)
		return nil
	}
	fmt.Fprintf(o.IO.Out, "workspace ready in %s; next: agentinfra task create --description \"...\" --mode coder\n", ws.Root)
	return nil
}

// unusableMatrix returns why the matrix at path cannot be used for tasks (a
// *matrix.NoTaskTableError), or nil.
func unusableMatrix(path string) error {
	src, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read matrix: %w", err)
	}
	return matrix.Parse(src).RequireTaskTable()
}
