package fix

import (
	"fmt"
	"strings"

	"github.com/agentinfra/agentinfra/internal/mdtext"
)

// Summary is the one-line account of the fix, as `validate --fix` prints it:
//
//	fixed 3 rows: joined 260120204152 (lines 8-12), row at line 40 (lines 40-41); moved 260121090000 (lines 50-58) to .agent/tasks/260121090000_x/README.md; canonicalized 4 values
//
// A dry run says "would fix", "would join", ...; a row that could not move
// says why after its lines; with nothing to do it says so.
func (r Report) Summary() string {
	if conflictMode(r.Mode) {
		return r.conflictSummary()
	}
	var joined, moved []string
	for _, fx := range r.Rows {
		who := fx.ID
		if who == "" {
			who = fmt.Sprintf("row at line %d", fx.Line)
		}
		where := fmt.Sprintf("lines %d-%d", fx.Line, fx.EndLine)
		if fx.Action == "moved" {
			moved = append(moved, fmt.Sprintf("%s (%s) to %s", who, where, fx.Readme))
			continue
		}
		if fx.Note != "" {
			where += "; " + fx.Note
		}
		joined = append(joined, fmt.Sprintf("%s (%s)", who, where))
	}
	verb := func(done, todo string) string {
		if r.DryRun {
			return todo
		}
		return done
	}
	var parts []string
	if n := len(r.Rows); n > 0 {
		s := verb("fixed", "would fix") + " " + fmt.Sprintf("%d %s", n, mdtext.Plural(n, "row", "rows")) + ": "
		var acts []string
		if len(joined) > 0 {
			acts = append(acts, verb("joined ", "join ")+strings.Join(joined, ", "))
		}
		if len(moved) > 0 {
			acts = append(acts, verb("moved ", "move ")+strings.Join(moved, ", "))
		}
		parts = append(parts, s+strings.Join(acts, "; "))
	}
	if r.Canonicalized > 0 {
		parts = append(parts, verb("canonicalized ", "would canonicalize ")+fmt.Sprintf("%d %s", r.Canonicalized, mdtext.Plural(r.Canonicalized, "value", "values")))
	}
	if len(parts) == 0 && len(r.NotFixed) > 0 {
		return "nothing --fix can repair; no file changed"
	}
	if len(parts) == 0 {
		what := "no row goes on over several lines"
		if r.Canonicalized == 0 {
			what += " and no Status, Pri or Diff cell holds an alias"
		}
		return "nothing to fix: " + what + "; no file changed"
	}
	return strings.Join(parts, "; ")
}

// conflictSummary is Summary for the modes that finish conflicts:
//
//	finished 2 conflicts: kept ours of T-2 (line 6); kept both of T-5 (line 12): theirs is T-7 now, its folder .agent/tasks/T-7_docs
func (r Report) conflictSummary() string {
	var parts []string
	for _, f := range r.Conflicts {
		what := "the conflict"
		if len(f.IDs) > 0 {
			what = strings.Join(f.IDs, ", ")
		}
		s := fmt.Sprintf("kept %s of %s (line %d)", f.Kept, what, f.Line)
		if rn := f.Renumbered; rn != nil {
			s += fmt.Sprintf(": theirs is %s now", rn.To)
			switch {
			case rn.Folder != "":
				s += ", its folder " + rn.Folder
			case rn.Note != "":
				s += " (" + rn.Note + ")"
			}
		}
		parts = append(parts, s)
	}
	verb := "finished"
	if r.DryRun {
		verb = "would finish"
	}
	if len(parts) == 0 {
		return "no conflict finished; no file changed"
	}
	return verb + " " + fmt.Sprintf("%d %s", len(parts), mdtext.Plural(len(parts), "conflict", "conflicts")) + ": " + strings.Join(parts, "; ")
}
