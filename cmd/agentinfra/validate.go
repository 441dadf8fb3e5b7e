package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/workspace"
)

func init() { registerCommand(newCmdValidate) }

type validateOptions struct {
	Format string
	File   string
}

func newCmdValidate(f *Factory) *cobra.Command {
	opts := &validateOptions{}
	cmd := &cobra.Command{
		Use:   "validate [FILE]",
		Short: "Check the matrix for errors and the workspace for warnings",
		Long: `Validate parses the matrix (default: the workspace's .agent/DEVELOPMENT_MATRIX.md)
and prints every problem as FILE:LINE:COL: error|warning: message.

Errors: duplicate or malformed IDs, unknown status/priority/difficulty, wrong
cell counts, rows broken across lines, task tables missing ID or Status, bad
dates. Warnings (only when a workspace is found): modes and skills that do not
exist, task folders with no row, IN_PROGRESS/REVIEW tasks with no folder.

Exit status: 1 if there is any error, 0 otherwise (warnings alone pass).`,
		Example: `  agentinfra validate
  agentinfra validate --format json
  agentinfra validate path/to/DEVELOPMENT_MATRIX.md`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.File = args[0]
			}
			if opts.Format != "text" && opts.Format != "json" {
				return usageErrorf("--format must be text or json, not %q", opts.Format)
			}
			return runValidate(f, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Format, "format", "text", "output format: text or json")
	return cmd
}

func runValidate(f *Factory, opts *validateOptions) error {
	var ws *workspace.Workspace
	path := opts.File
	if path == "" {
		var err error
		if ws, err = f.Workspace(); err != nil {
			return err
		}
		path = ws.MatrixPath()
	} else {
		if !filepath.IsAbs(path) {
			path = filepath.Join(f.Cwd, path)
		}
		// A matrix inside a workspace's .agent/ also gets the workspace checks.
		if filepath.Base(filepath.Dir(path)) == ".agent" {
			ws, _ = workspace.New(filepath.Dir(filepath.Dir(path)))
		}
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read matrix: %w; pass the path of a DEVELOPMENT_MATRIX.md or run `agentinfra init`", err)
	}
	doc := matrix.Parse(src)
	shown := displayPath(f.Cwd, path)
	diags := matrix.Validate(ws, doc, shown, f.Getenv)
	if !doc.HasTaskTable() {
		diags = append(diags, matrix.Diagnostic{File: shown, Line: 1, Col: 1, Severity: matrix.SeverityWarning,
			Message: "no task table found (a table whose header has ID and Status columns)"})
	}
	if opts.Format == "json" {
		out := struct {
			File        string              `json:"file"`
			Tasks       int                 `json:"tasks"`
			Errors      int                 `json:"errors"`
			Warnings    int                 `json:"warnings"`
			Diagnostics []matrix.Diagnostic `json:"diagnostics"`
		}{File: shown, Tasks: len(doc.IDs()), Diagnostics: append([]matrix.Diagnostic{}, diags...)}
		for _, d := range diags {
			if d.Severity == matrix.SeverityError {
				out.Errors++
			} else {
				out.Warnings++
			}
		}
		enc := json.NewEncoder(f.IO.Out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return err
		}
	} else {
		for _, d := range diags {
			fmt.Fprintln(f.IO.Out, d.String())
		}
	}
	if matrix.HasErrors(diags) {
		return &exitError{code: 1}
	}
	if opts.Format == "text" && len(diags) == 0 {
		fmt.Fprintf(f.IO.ErrOut, "%s: %d tasks, no problems\n", shown, len(doc.IDs()))
	}
	return nil
}

// displayPath shows path relative to the current directory when it is below it.
func displayPath(cwd, path string) string {
	if rel, err := filepath.Rel(cwd, path); err == nil && !filepath.IsAbs(rel) && len(rel) > 0 && rel[0] != '.' {
		return rel
	}
	if rel, err := filepath.Rel(cwd, path); err == nil && len(rel) < len(path) {
		return rel
	}
	return path
}
