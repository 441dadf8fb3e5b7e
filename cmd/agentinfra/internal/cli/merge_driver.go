package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/matrix"
)

// MergeDriverOptions is what `merge-driver` runs with: git's %O %A %B %P %L.
type MergeDriverOptions struct {
	IO                     *IOStreams
	Ancestor, Ours, Theirs string
	Path                   string // the matrix's path in the repository, for messages
	MarkerSize             int
}

// NewCmdMergeDriver is the git merge driver of the matrix (issue 32).
func NewCmdMergeDriver(f *Factory, runF func(context.Context, *MergeDriverOptions) error) *cobra.Command {
	o := &MergeDriverOptions{IO: f.IO}
	return &cobra.Command{
		Use:   "merge-driver ANCESTOR OURS THEIRS PATH [MARKER_SIZE]",
		Short: "Merge two versions of the matrix by task ID (git runs it as a merge driver)",
		Long: `merge-driver is what git runs to merge .agent/DEVELOPMENT_MATRIX.md once 'agentinfra
init' or 'agentinfra hook install' registered it: ANCESTOR, OURS and THEIRS are git's %O
%A %B (the common ancestor and the two versions), PATH its %P, MARKER_SIZE its %L. The
merge is written into OURS. Exit status 0: merged cleanly; 1: merged with conflicts.

Rows are matched by task ID and columns by name, not lines by position:
  - a row added on either side is kept where that side put it (both sides' new rows
    after the same row: ours first, then theirs);
  - a row deleted on one side and unchanged on the other is deleted; deleted on one
    side and changed on the other is a conflict;
  - a cell changed on one side takes the change; changed alike on both is fine;
    Updated takes the later date; Agents, Skills and Deps take both sides' additions
    and removals; any other cell changed two ways is a conflict of that row alone;
  - the same new ID on both sides with different rows keeps both, as a conflict
    ('agentinfra validate --fix=renumber' gives theirs the next free ID);
  - a column added on one side is added (empty in the other side's rows);
  - the text around the task tables merges as git merges lines (git merge-file).
A conflict is git's markers around the two versions of that one row; everything
else is merged. 'agentinfra validate' names each conflicted row, its cells and both
values, and how to finish: 'agentinfra validate --fix=ours ID', '--fix=theirs ID',
'--fix=renumber', or an edit. Line endings, padding and the text around the tables
are kept. When the tables cannot be matched (a task table added or removed on one
side, a side with conflict markers already), the whole file merges as git merges
lines, and it says so on stderr.

Registering it by hand (what init and hook install do):
  .gitattributes:  .agent/DEVELOPMENT_MATRIX.md merge=agentinfra
  git config merge.agentinfra.name "agentinfra: merge the task matrix by task ID"
  git config merge.agentinfra.driver "agentinfra merge-driver %O %A %B %P %L"
git runs merge drivers in merges, rebases and cherry-picks on a machine; a forge's
web merge button does not (see the README).`,
		Example: `  # what git runs (after agentinfra hook install):
  agentinfra merge-driver .merge_file_a1 .merge_file_b2 .merge_file_c3 .agent/DEVELOPMENT_MATRIX.md 7
  # merge three versions by hand into ours.md:
  agentinfra merge-driver base.md ours.md theirs.md .agent/DEVELOPMENT_MATRIX.md`,
		Args: cobra.RangeArgs(4, 5),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Ancestor, o.Ours, o.Theirs, o.Path = args[0], args[1], args[2], args[3]
			o.MarkerSize = 7
			if len(args) == 5 {
				n, err := strconv.Atoi(args[4])
				if err != nil || n < 7 || n > 100 {
					return UsageErrorf("MARKER_SIZE must be a number of 7 or more (git's %%L), not %q", args[4])
				}
				o.MarkerSize = n
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return mergeDriverRun(cmd.Context(), o)
		},
	}
}

func mergeDriverRun(ctx context.Context, o *MergeDriverOptions) error {
	var files [3][]byte
	for i, p := range []string{o.Ancestor, o.Ours, o.Theirs} {
		b, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("merge-driver: read %s: %w", p, err)
		}
		files[i] = b
	}
	lines := gitMergeFile(ctx, o.MarkerSize)
	res, err := matrix.Merge(files[0], files[1], files[2], matrix.MergeOptions{Lines: lines, MarkerSize: o.MarkerSize})
	if err != nil {
		// Never leave ours alone while git records a conflict: the other
		// side's changes would be missing from the file without a marker.
		fmt.Fprintf(o.IO.ErrOut, "agentinfra merge-driver: %s: %v; merging it line by line instead\n", o.Path, err)
		out, n, lerr := lines(files[0], files[1], files[2])
		if lerr != nil {
			// Not even git's line merge: both whole versions between markers.
			fmt.Fprintf(o.IO.ErrOut, "agentinfra merge-driver: %s: %v; writing both versions between conflict markers\n", o.Path, lerr)
			out, n = wholeConflict(files[1], files[2], o.MarkerSize), 1
		}
		res = matrix.MergeResult{Bytes: out}
		if n > 0 {
			res.Conflicts = []matrix.MergeConflict{{Kind: matrix.ConflictLines, Line: 1}}
		}
	}
	if err := writeInPlace(o.Ours, res.Bytes); err != nil {
		return fmt.Errorf("merge-driver: write the merged %s: %w", o.Path, err)
	}
	if res.ByLines != "" {
		fmt.Fprintf(o.IO.ErrOut, "agentinfra merge-driver: %s merged line by line, as git does: %s\n", o.Path, res.ByLines)
	}
	if len(res.Conflicts) == 0 {
		return nil
	}
	for _, c := range res.Conflicts {
		fmt.Fprintf(o.IO.ErrOut, "agentinfra merge-driver: %s:%d: %s\n", o.Path, c.Line, describeConflict(c))
	}
	fmt.Fprintf(o.IO.ErrOut, "agentinfra merge-driver: %d %s in %s, everything else merged; `agentinfra validate` says how to finish each\n",
		len(res.Conflicts), Plural(len(res.Conflicts), "conflict", "conflicts"), o.Path)
	return &ExitError{Code: 1}
}

// describeConflict says what a conflict of the merge holds, in a line.
func describeConflict(c matrix.MergeConflict) string {
	switch c.Kind {
	case matrix.ConflictCells:
		s := "task " + c.ID + ": both sides changed"
		for i, cc := range c.Cells {
			if i > 0 {
				s += ","
			}
			s += fmt.Sprintf(" %s (ours %q, theirs %q)", cc.Column, cc.Ours, cc.Theirs)
		}
		return s
	case matrix.ConflictDeleted:
		return fmt.Sprintf("task %s: deleted by %s, changed by the other side", c.ID, c.DeletedBy)
	case matrix.ConflictAddedBoth:
		return fmt.Sprintf("task %s: added on both sides as two different tasks (agentinfra validate --fix=renumber keeps both)", c.ID)
	}
	return "conflict of the text around the task rows"
}

// writeInPlace replaces the content of path, keeping the file (git reads
// the merge from the path it gave).
func writeInPlace(path string, data []byte) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, fi.Mode().Perm())
}

// gitMergeFile is matrix.MergeOptions.Lines by `git merge-file`: git's own
// line merge, with its markers labelled ours, base and theirs.
func gitMergeFile(ctx context.Context, markerSize int) func(base, ours, theirs []byte) ([]byte, int, error) {
	return func(base, ours, theirs []byte) ([]byte, int, error) {
		dir, err := os.MkdirTemp("", "agentinfra-merge-")
		if err != nil {
			return nil, 0, err
		}
		defer os.RemoveAll(dir)
		names := []string{"ours", "base", "theirs"}
		for i, b := range [][]byte{ours, base, theirs} {
			if err := os.WriteFile(filepath.Join(dir, names[i]), b, 0o600); err != nil {
				return nil, 0, err
			}
		}
		cmd := exec.CommandContext(ctx, "git", "merge-file", "-p", "--marker-size="+strconv.Itoa(markerSize),
			"-L", "ours", "-L", "base", "-L", "theirs", "ours", "base", "theirs")
		cmd.Dir = dir
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err = cmd.Run()
		var ee *exec.ExitError
		switch {
		case err == nil:
			return stdout.Bytes(), 0, nil
		case errors.As(err, &ee) && ee.ExitCode() > 0 && ee.ExitCode() < 128:
			return stdout.Bytes(), ee.ExitCode(), nil // the number of conflicts
		}
		return nil, 0, fmt.Errorf("git merge-file: %v: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
}

// wholeConflict is one conflict of the two whole files.
func wholeConflict(ours, theirs []byte, size int) []byte {
	var b bytes.Buffer
	section := func(marker byte, label string, text []byte) {
		b.WriteString(strings.Repeat(string(marker), size))
		if label != "" {
			b.WriteString(" " + label)
		}
		b.WriteByte('\n')
		b.Write(text)
		if len(text) > 0 && text[len(text)-1] != '\n' {
			b.WriteByte('\n')
		}
	}
	section('<', "ours", ours)
	section('=', "", theirs)
	b.WriteString(strings.Repeat(">", size) + " theirs\n")
	return b.Bytes()
}
