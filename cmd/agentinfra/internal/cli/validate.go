package cli

import (
	"bufio"
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/fix"
	"github.com/agentinfra/agentinfra/internal/jsonout"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// ValidateOptions is what `validate` runs with.
type ValidateOptions struct {
	Factory *Factory // IO, workspace, working folder, environment
	Format  string   // text or json (--json is --format json)
	Files   []string
	Staged  bool
	Fix     bool
	FixMode fix.Mode // with Fix: join, move, ours, theirs or renumber
	// IDs are the tasks whose merge conflicts --fix=ours|theirs|renumber finish.
	IDs    []string
	DryRun bool
}

// NewCmdValidate parses `validate`'s flags and arguments into ValidateOptions
// and calls runF (validateRun when nil); usage errors are raised here.
func NewCmdValidate(f *Factory, runF func(context.Context, *ValidateOptions) error) *cobra.Command {
	opts := &ValidateOptions{Factory: f}
	var asJSON bool
	var fixMode string
	cmd := &cobra.Command{
		Use:   "validate [FILE...] | validate --fix[=MODE] [ID...]",
		Short: "Check the matrix for errors and the workspace for warnings",
		Long: `Validate parses the matrix (default: the workspace's .agent/DEVELOPMENT_MATRIX.md)
and prints every problem as FILE:LINE:COL: error|warning: message.

Errors: duplicate or malformed IDs, unknown status/priority/difficulty, rows
with a wrong cell count (not read), rows that go on over several lines (read
whole; named with their task ID and line span), rows that never end, task
tables missing ID or Status, bad dates, and a file with no task table at all (an
emptied file, an older-format file: see agentinfra migrate, a file that is no
matrix; a task table with no rows, as init writes it, is fine). Warnings: |-led
lines that belong to no table; and, when a workspace is found, modes and skills
that do not exist, task folders with no row, IN_PROGRESS/REVIEW tasks with no
folder. The last line, on stderr, counts the tasks and the rows that could not
be read.

With --staged it checks the version of the matrix staged in git's index, as the
pre-commit hook does (see 'agentinfra hook install'). Errors: a staged matrix
that is empty, has no task table, or has no row while HEAD's has rows, and a
commit that deletes or moves the matrix (git rm, git mv, git rm -r .agent).
Rows that HEAD has and the staged file lacks, while others stay, are a warning
naming their IDs. When no matrix is staged or tracked (no .agent/ committed
yet, or .agent/ gitignored) it passes without a word.

With --fix it repairs the workspace's matrix without losing a word, then
validates the result and prints what is left:
  --fix (or --fix=join)  every row that goes on over several lines becomes one
                         line: its lines joined with <br> (a blank line: <br><br>),
                         each line of a fenced code block as inline code, every
                         | escaped as \|
  --fix=move             the long Description moves, verbatim, into the task's
                         README (.agent/tasks/{id}_{slug}/README.md, scaffolded
                         when missing) under "## Description"; the cell keeps
                         its first sentence. Rows without a usable ID are joined.
With matrix.canonicalize: true in .agent/config.yaml it also rewrites aliases
of Status, Pri and Diff to their canonical value. It takes the matrix lock,
writes task READMEs before the matrix, and replaces each file atomically;
--dry-run prints the unified diff of every file it would change and writes
nothing. Rows it cannot read (a wrong number of cells, a row that never ends)
cannot be fixed automatically: it names their lines and what to do.

A merge of the matrix that could not decide (see 'agentinfra merge-driver --help')
leaves git's conflict markers around the two versions of a row. validate names each
conflicted row, the cells both sides changed and both values, and how to finish:
  --fix=ours ID          keep ours' side of the conflict of task ID (several IDs: each)
  --fix=theirs ID        keep theirs' side
  --fix=renumber [ID]    one new ID on both sides, two different tasks: keep both,
                         theirs with the next free ID (its task folder
                         .agent/tasks/{id}_{slug}/ renamed to it); without ID, every
                         such conflict
or edit the lines into the row you want and delete the marker lines. ours is the
branch you are on (in a rebase: the branch you rebase onto), theirs the one merged
in (in a rebase: your commit being replayed). Every other command refuses to write
the matrix while it holds conflicts.

Exit status: 1 if there is any error (with --fix: any error left after the
fix, or in a dry run after the fix it would make), 0 otherwise (warnings
alone pass); 2 for a wrong invocation.`,
		Example: `  agentinfra validate
  agentinfra validate --format json
  agentinfra validate path/to/DEVELOPMENT_MATRIX.md
  agentinfra validate --staged             # what the pre-commit hook runs
  agentinfra validate --fix --dry-run      # show the diff of the repair
  agentinfra validate --fix                # join rows broken over several lines
  agentinfra validate --fix=move --json    # move long descriptions into task READMEs
  agentinfra validate --fix=theirs T-12    # a merge conflict on T-12: keep theirs' row
  agentinfra validate --fix=renumber       # T-12 added on both sides: keep both, renumber theirs`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Files = args
			if asJSON {
				opts.Format = "json"
			}
			if opts.Format != "text" && opts.Format != "json" {
				return UsageErrorf("--format must be text or json, not %q", opts.Format)
			}
			if opts.Staged && len(args) > 0 {
				return UsageErrorf("--staged checks the workspace's matrix; do not pass files with it")
			}
			if opts.DryRun && !cmd.Flags().Changed("fix") {
				return UsageErrorf("--dry-run goes with --fix: agentinfra validate --fix --dry-run")
			}
			if cmd.Flags().Changed("fix") {
				mode, err := fix.ParseMode(fixMode)
				if err != nil {
					return UsageErrorf("--fix=%s: use --fix (join, the default) or --fix=move; to finish a merge's conflicts --fix=ours ID, --fix=theirs ID or --fix=renumber", fixMode)
				}
				if !mode.TakesIDs() && len(args) > 0 && strings.TrimSpace(args[0]) != "" {
					if _, err := fix.ParseMode(args[0]); err == nil {
						return UsageErrorf("write --fix=%s, with '=' (a word after --fix is a FILE)", args[0])
					}
				}
				if opts.Staged || len(args) > 0 && !mode.TakesIDs() {
					return UsageErrorf("--fix repairs the workspace's matrix (see --root) and cannot take --staged or FILE arguments; run agentinfra validate --fix in the workspace")
				}
				if (mode == fix.Ours || mode == fix.Theirs) && len(args) == 0 {
					return UsageErrorf("--fix=%s keeps one side of a task's merge conflict: name the task, agentinfra validate --fix=%s ID (agentinfra validate names the conflicted tasks)", mode, mode)
				}
				if mode.TakesIDs() {
					opts.IDs = args
					opts.Files = nil
				}
				opts.Fix, opts.FixMode = true, mode
			}
			if runF == nil {
				runF = validateRun
			}
			return runF(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Format, "format", "text", "output format: text or json")
	cmd.Flags().BoolVar(&asJSON, "json", false, "same as --format json")
	cmd.Flags().BoolVar(&opts.Staged, "staged", false, "check the matrix as staged in git's index")
	cmd.Flags().StringVar(&fixMode, "fix", "", "repair the workspace's matrix: join (the default) or move; finish a merge's conflicts: ours ID, theirs ID, renumber")
	cmd.Flags().Lookup("fix").NoOptDefVal = string(fix.Join)
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "with --fix: print the diff of every file it would change, write nothing")
	return cmd
}

// validationResult is one file's outcome, also its --format json shape.
type validationResult struct {
	File  string `json:"file"`
	Tasks int    `json:"tasks"`
	// Unread counts the rows that could not be read: no command lists,
	// shows or changes them until they are fixed.
	Unread      int                 `json:"unread_rows"`
	Errors      int                 `json:"errors"`
	Warnings    int                 `json:"warnings"`
	Diagnostics []matrix.Diagnostic `json:"diagnostics"`
}

// validateRun checks (or, with Fix, repairs) the matrix as opts say.
func validateRun(ctx context.Context, opts *ValidateOptions) error {
	if opts.Fix {
		return runValidateFix(ctx, opts.Factory, opts, opts.FixMode)
	}
	return runValidate(ctx, opts.Factory, opts)
}

func runValidate(ctx context.Context, f *Factory, opts *ValidateOptions) error {
	var results []validationResult
	switch {
	case opts.Staged:
		r, err := validateStaged(ctx, f)
		if err != nil || r == nil {
			return err // nil: no matrix staged or tracked, nothing to check
		}
		results = append(results, *r)
	case len(opts.Files) == 0:
		ws, err := f.Workspace()
		if err != nil {
			return err
		}
		r, err := validateFile(f, ws, ws.MatrixPath())
		if err != nil {
			return err
		}
		results = append(results, r)
	default:
		for _, path := range opts.Files {
			if !filepath.IsAbs(path) {
				path = filepath.Join(f.Cwd, path)
			}
			// A matrix inside a workspace's .agent/ also gets the workspace checks.
			var ws *workspace.Workspace
			if filepath.Base(filepath.Dir(path)) == ".agent" {
				ws, _ = workspace.New(filepath.Dir(filepath.Dir(path)))
			}
			r, err := validateFile(f, ws, path)
			if err != nil {
				return err
			}
			results = append(results, r)
		}
	}
	if !opts.Staged && len(opts.Files) == 0 || opts.Staged && len(results) > 0 {
		// This clone's git config lacks the merge driver .gitattributes names.
		if ws, err := f.Workspace(); err == nil {
			if w := mergeDriverWarning(ctx, f, ws); w != nil {
				results[0].Diagnostics = append(results[0].Diagnostics, *w)
				results[0].Warnings++
			}
		}
	}
	failed := false
	for _, r := range results {
		failed = failed || r.Errors > 0
	}
	if opts.Format == "json" {
		var v any = results
		if len(results) == 1 {
			v = results[0]
		}
		if err := jsonout.Write(f.IO.Out, v); err != nil {
			return err
		}
	} else {
		// One write for all diagnostics, not one per line: a real matrix
		// can have thousands of warnings.
		w := bufio.NewWriterSize(f.IO.Out, 64<<10)
		for _, r := range results {
			for _, d := range r.Diagnostics {
				w.WriteString(d.String())
				w.WriteByte('\n')
			}
		}
		if err := w.Flush(); err != nil {
			return err
		}
		for _, r := range results {
			fmt.Fprintln(f.IO.ErrOut, validationSummary(r))
		}
	}
	if failed {
		return &ExitError{Code: 1}
	}
	return nil
}

// validationSummary is the line that ends validate's text output: how many
// tasks were read and, so that no reader's silence goes unexplained, how many
// rows were not.
func validationSummary(r validationResult) string {
	if len(r.Diagnostics) == 0 {
		return fmt.Sprintf("%s: %d tasks, no problems", r.File, r.Tasks)
	}
	msg := fmt.Sprintf("%s: %d tasks", r.File, r.Tasks)
	if r.Unread > 0 {
		msg += fmt.Sprintf(", %d %s could not be read (task list, show and every other command skip %s until %s fixed)",
			r.Unread, Plural(r.Unread, "row", "rows"), Plural(r.Unread, "it", "them"), Plural(r.Unread, "it is", "they are"))
	}
	return msg + fmt.Sprintf("; %d %s, %d %s", r.Errors, Plural(r.Errors, "error", "errors"), r.Warnings, Plural(r.Warnings, "warning", "warnings"))
}

func validateFile(f *Factory, ws *workspace.Workspace, path string) (validationResult, error) {
	src, err := readFileMapped(path)
	if err != nil {
		return validationResult{}, fmt.Errorf("read matrix: %w; pass the path of a DEVELOPMENT_MATRIX.md or run `agentinfra init`", err)
	}
	return validateBytes(f, ws, src, path)
}

// validateBytes checks a matrix; inside a workspace, with its vocabulary.
func validateBytes(f *Factory, ws *workspace.Workspace, src []byte, path string) (validationResult, error) {
	var vocab *matrix.Vocabulary
	// The workspace's folders are listed while the matrix is parsed: on a
	// second core, listing 4,000 task folders (~1.5 ms, nearly all of it in
	// the kernel) hides behind parsing 10,000 rows (~3 ms).
	listed := make(chan *task.WorkspaceListing, 1)
	if ws != nil {
		var err error
		if vocab, err = task.LoadVocabulary(ws); err != nil {
			return validationResult{}, err
		}
		go func() { listed <- task.ListWorkspace(ws, f.Getenv) }()
	} else {
		listed <- nil
	}
	// A merge's conflicts are named first, and the rest is checked in
	// the file as it is on this side (ours), its lines mapped back: a
	// marker line would end the table around it.
	conflicts := matrix.Conflicts(src, vocab)
	view, viewLine := matrix.ConflictView(src)
	doc := matrix.ParseWith(view, vocab)
	shown := displayPath(f.Cwd, path)
	diags := task.ValidateListed(<-listed, doc, shown)
	for i, d := range diags {
		// The workspace's other files (its config) are named from its
		// root: shown from the current folder, as the matrix is.
		if d.File != shown && ws != nil && !filepath.IsAbs(d.File) {
			diags[i].File = displayPath(f.Cwd, filepath.Join(ws.Root, d.File))
		}
		if d.File == shown {
			diags[i].Line = viewLine(d.Line)
		}
	}
	if len(conflicts) > 0 {
		for _, d := range matrix.ConflictDiagnostics(conflicts) {
			d.File = shown
			diags = append(diags, d)
		}
		matrix.SortDiagnostics(diags)
	}
	r := validationResult{File: shown, Tasks: doc.NumTasks(), Diagnostics: append([]matrix.Diagnostic{}, diags...)}
	for _, p := range doc.ReadProblems() {
		if p.Severity == matrix.SeverityError {
			r.Unread++
		}
	}
	for _, d := range diags {
		if d.Severity == matrix.SeverityError {
			r.Errors++
		} else {
			r.Warnings++
		}
	}
	return r, nil
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
