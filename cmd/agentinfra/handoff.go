package main

import (
	"fmt"
	"path/filepath"

	"github.com/agentinfra/agentinfra/handoff"
	"github.com/agentinfra/agentinfra/internal/jsonout"
	"github.com/spf13/cobra"
)

type handoffJSON struct {
	Path string `json:"path"` // workspace-relative
	handoff.Report
}

func newCmdHandoff(f *Factory) *cobra.Command {
	var asJSON bool
	var opts handoff.Options
	cmd := &cobra.Command{
		Use:   "handoff",
		Short: "Write a handoff note: open tasks with their latest notes, recently done, next up, git state",
		Long: fmt.Sprintf(`Write .agent/handoffs/{YYMMDD_HHMM}_handoff.md for whoever picks up the work next:
the tasks IN_PROGRESS, REVIEW and BLOCKED with the end of their latest tracking
note; recently done tasks (most recently updated first, at most --done); next up
(TODO by priority, then oldest first, at most --next); and, when the workspace
root is in a git repository, the branch, the uncommitted files and the last %d
commits (read with the git CLI).

A handoff never overwrites a file: when the name is taken, _2, _3, ... is added.
--out FILE writes elsewhere inside the workspace and refuses an existing file.
Prints the path of the file written.`, handoff.Commits),
		Example: `  agentinfra handoff
  agentinfra handoff --out docs/HANDOFF.md
  agentinfra handoff --json | jq '.next_up[].id'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Done < 0 || opts.Next < 0 {
				return usageErrorf("--done and --next must be positive")
			}
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			if opts.Out != "" && !filepath.IsAbs(opts.Out) && f.Cwd != "" {
				opts.Out = filepath.Join(f.Cwd, opts.Out) // like other path flags: relative to the current folder
			}
			path, h, err := handoff.Write(cmd.Context(), ws, f.Now(), opts)
			if err != nil {
				return err
			}
			rel := ws.RelPath(path)
			if asJSON {
				return jsonout.Write(f.IO.Out, handoffJSON{Path: rel, Report: h})
			}
			_, err = fmt.Fprintln(f.IO.Out, rel)
			return err
		},
	}
	cmd.Flags().StringVar(&opts.Out, "out", "", "write to FILE (relative to the current folder; inside the workspace; must not exist) instead of .agent/handoffs/")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON: {path, generated_at, in_progress, review, blocked, recently_done, next_up, git, text, ...}")
	cmd.Flags().IntVar(&opts.Done, "done", handoff.DefaultDone, "how many recently done tasks to list")
	cmd.Flags().IntVar(&opts.Next, "next", handoff.DefaultNext, "how many TODO tasks to list under next up")
	return cmd
}
