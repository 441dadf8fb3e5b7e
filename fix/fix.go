// Package fix repairs a matrix without losing a word (`agentinfra validate
// --fix`): rows that go on over several lines become one line each (Join),
// or their long text moves into the task's README (Move); aliases become
// canonical values when the workspace config asks for it. The CLI and the
// MCP server both call Run.
package fix

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/internal/textdiff"
	"github.com/agentinfra/agentinfra/matrix"
	tasksvc "github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// Mode says what happens to a row that goes on over several lines.
type Mode string

const (
	// Join writes the row on one line, its line breaks as `<br>` (JoinCell).
	Join Mode = "join"
	// Move moves the long Description into the task's README and leaves its
	// first sentence in the cell; a row without a usable ID is joined.
	Move Mode = "move"
	// Ours, Theirs and Renumber finish a merge's conflicts (see
	// conflicts.go): keep ours' or theirs' side of the conflict of the IDs
	// named, or keep both rows of one ID added on both sides, theirs with
	// the next free ID.
	Ours     Mode = "ours"
	Theirs   Mode = "theirs"
	Renumber Mode = "renumber"
)

// ErrMode marks a mode that is neither join nor move.
var ErrMode = agenterr.New(agenterr.Invalid, "unknown fix mode")

// ParseMode reads a --fix value; "" is Join.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.ToLower(strings.TrimSpace(s))); m {
	case "", Join:
		return Join, nil
	case Move, Ours, Theirs, Renumber:
		return m, nil
	}
	return "", fmt.Errorf("%w %q: use join (the default), move, or, to finish a merge's conflicts, ours, theirs or renumber", ErrMode, s)
}

// TakesIDs reports whether a mode works on the task IDs given to it (the
// modes that finish conflicts).
func (m Mode) TakesIDs() bool { return conflictMode(m) }

// Options tunes Run.
type Options struct {
	Mode   Mode // "" is Join
	DryRun bool // change nothing; Report.Files carry the diffs
	// Now dates the note above moved text and the task folders Move
	// creates; zero is time.Now().
	Now time.Time
	// File names the matrix in Report.Remaining; "" is its path relative to
	// the workspace root.
	File string
	// Getenv finds the global skills folder for the validation of the
	// result; nil is os.Getenv.
	Getenv func(string) string
	// IDs are the tasks whose conflicts Ours, Theirs or Renumber finish
	// (Renumber without IDs: every conflict of one ID added on both sides).
	IDs []string
}

// Report says what Run did (or, in a dry run, would do) and what is left.
type Report struct {
	Matrix string `json:"matrix"` // workspace-relative, slash-separated
	Mode   Mode   `json:"mode"`
	DryRun bool   `json:"dry_run"`
	// Rows are the rows fixed, in file order.
	Rows []RowFix `json:"rows"`
	// Canonicalized counts the Status, Pri and Diff cells rewritten from an
	// alias (the config's matrix.canonicalize); -1 when the config does not
	// ask for it.
	Canonicalized int `json:"canonicalized"`
	// NotFixed are the rows --fix could not repair: rows it could not read
	// (a wrong number of cells, a row that never ends) and rows whose new
	// line would not read back as the same row.
	NotFixed []NotFixed `json:"not_fixed"`
	// Files are the files written (or that a dry run would write): task
	// READMEs first, in the order they are written, the matrix last.
	Files []FileChange `json:"files"`
	// Tasks is the number of task rows in the result.
	Tasks int `json:"tasks"`
	// Remaining is what validate reports on the result: the file's problems
	// and the workspace warnings.
	Remaining []matrix.Diagnostic `json:"remaining"`
	// Conflicts are the merge conflicts finished (Ours, Theirs, Renumber).
	Conflicts []Finished `json:"conflicts,omitempty"`
}

// RowFix is one repaired row. Line and EndLine are where it was before.
type RowFix struct {
	ID      string `json:"id,omitempty"`
	Line    int    `json:"line"`
	EndLine int    `json:"end_line"`
	Action  string `json:"action"`           // "joined" or "moved"
	Readme  string `json:"readme,omitempty"` // moved: the README that holds the text now
	// Note says why a row Move was asked to move was joined instead.
	Note string `json:"note,omitempty"`
}

// NotFixed is a row left for a person to repair, with what to do.
type NotFixed struct {
	ID string `json:"id,omitempty"`
	// Line is the row's first line in the fixed file (in a dry run: in the
	// file as it is, which the dry run leaves unchanged).
	Line    int    `json:"line"`
	Reason  string `json:"reason"`
	endLine int
	why     string // Reason without the lines, for a continued row
}

// FileChange is one file written (or, in a dry run, that would be).
type FileChange struct {
	Path    string `json:"path"` // workspace-relative, slash-separated
	Created bool   `json:"created,omitempty"`
	// Diff is the unified diff of the change (dry runs only).
	Diff   string `json:"diff,omitempty"`
	before string
	after  string
}

// Errors counts the errors left in the result.
func (r Report) Errors() int {
	n := 0
	for _, d := range r.Remaining {
		if d.Severity == matrix.SeverityError {
			n++
		}
	}
	return n
}

// Warnings counts the warnings left in the result.
func (r Report) Warnings() int { return len(r.Remaining) - r.Errors() }

// Changed reports whether the fix changes any file.
func (r Report) Changed() bool { return len(r.Files) > 0 }

// Run repairs the workspace's matrix (see the package comment) and then
// validates the result. Files change in this order, each atomically: task
// folders Move needs are scaffolded (each under the matrix lock), then under
// the lock the READMEs get the moved text, then the matrix is replaced; so a
// failure at any step leaves every word in the workspace (at worst twice).
// A dry run reads, plans and diffs, and writes nothing.
func Run(ctx context.Context, ws *workspace.Workspace, o Options) (Report, error) {
	if o.Mode == "" {
		o.Mode = Join
	}
	if o.Mode != Join && o.Mode != Move && !conflictMode(o.Mode) {
		return Report{}, fmt.Errorf("%w %q: use join, move, ours, theirs or renumber", ErrMode, o.Mode)
	}
	if (o.Mode == Ours || o.Mode == Theirs) && len(o.IDs) == 0 {
		return Report{}, &agenterr.Error{Kind: agenterr.Invalid, Field: "id", Reason: fmt.Sprintf("--fix=%s keeps one side of the conflict of a task: name the task (agentinfra validate --fix=%s ID)", o.Mode, o.Mode)}
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	st, err := tasksvc.OpenStore(ws)
	if err != nil {
		return Report{}, err
	}
	rep := Report{Matrix: ws.RelPath(st.Path), Mode: o.Mode, DryRun: o.DryRun, Canonicalized: -1}
	if o.File == "" {
		o.File = rep.Matrix
	}
	if conflictMode(o.Mode) {
		return runConflicts(ctx, ws, o, rep, st)
	}
	tmpl, err := loadTemplate(ws, o)
	if err != nil {
		return Report{}, err
	}
	r := &run{ws: ws, o: o, tmpl: tmpl, matrixRel: rep.Matrix, canonicalize: st.Vocab.Canonicalize()}
	// Plan on a read without the lock first: a dry run stops here, and with
	// nothing to fix nothing is touched, not even the lock file.
	doc, err := st.Load(ctx)
	if err != nil {
		return Report{}, err
	}
	if cs := matrix.ConflictBlocks(doc.Bytes()); len(cs) > 0 {
		// A marker line ends the table around it: rows would be read wrong.
		return Report{}, &agenterr.Error{Kind: agenterr.Refused, Err: matrix.ErrUnfinishedMerge, Reason: fmt.Sprintf(
			"the matrix holds %s (the first on line %d); finish %s first (agentinfra validate names each and how: --fix=ours ID, --fix=theirs ID, --fix=renumber, or an edit), then run --fix=%s again",
			fmt.Sprintf("%d %s", len(cs), mdtext.Plural(len(cs), "unfinished merge conflict", "unfinished merge conflicts")), cs[0].Line, map[bool]string{true: "it", false: "them"}[len(cs) == 1], o.Mode)}
	}
	before := doc.Bytes()
	p, err := r.plan(doc)
	if err != nil {
		return Report{}, err
	}
	if o.DryRun || string(doc.Bytes()) == string(before) && len(p.files) == 0 {
		return r.report(rep, doc, before, p)
	}
	if r.sc, err = scaffoldFolders(ctx, ws, st, o); err != nil {
		return Report{}, err
	}
	// Under the lock, plan again on what is there now.
	doc, err = st.Modify(ctx, func(d *matrix.Doc) error {
		before = append([]byte(nil), d.Bytes()...)
		var err error
		if p, err = r.plan(d); err != nil {
			return err
		}
		if err := p.writeReadmes(ws); err != nil {
			return err
		}
		if testHookAfterReadmes != nil {
			return testHookAfterReadmes()
		}
		return nil
	})
	if err != nil {
		return Report{}, err
	}
	return r.report(rep, doc, before, p)
}

// report fills rep with the plan and the validation of the result.
func (r *run) report(rep Report, doc *matrix.Doc, before []byte, p *plan) (Report, error) {
	var err error
	rep.Rows, rep.NotFixed, rep.Files = p.rows, p.notFixed, p.files
	if string(doc.Bytes()) != string(before) {
		rep.Files = append(rep.Files, FileChange{Path: rep.Matrix, before: string(before), after: string(doc.Bytes())})
	}
	if r.canonicalize {
		rep.Canonicalized = p.canonicalized
	}
	if r.o.DryRun {
		for i := range rep.Files {
			f := &rep.Files[i]
			if f.Diff, err = textdiff.Diff(f.Path, f.before, f.after); err != nil {
				return Report{}, err
			}
		}
	}
	// Lists are [] in JSON, never null.
	rep.Rows, rep.NotFixed, rep.Files = orEmpty(rep.Rows), orEmpty(rep.NotFixed), orEmpty(rep.Files)
	rep.Tasks = len(doc.Tasks())
	rep.Remaining = orEmpty(tasksvc.Validate(r.ws, doc, r.o.File, r.o.Getenv))
	// Lines are named where the user finds them: in the fixed file after a
	// fix, in the file as it is after a dry run (which changes nothing).
	lines := lineMap{rows: p.rows}
	for k := range rep.NotFixed {
		nf := &rep.NotFixed[k]
		if !r.o.DryRun {
			nf.Line, nf.endLine = lines.fixed(nf.Line), lines.fixed(nf.endLine)
		}
		nf.Reason = fmt.Sprintf("the row goes on over lines %d-%d and %s", nf.Line, nf.endLine, nf.why)
	}
	if r.o.DryRun {
		for i, dg := range rep.Remaining {
			if dg.File == r.o.File {
				rep.Remaining[i].Line = lines.original(dg.Line)
			}
		}
	}
	for _, dg := range doc.ReadProblems() {
		if dg.Severity == matrix.SeverityError {
			line := dg.Line
			if r.o.DryRun {
				line = lines.original(line)
			}
			rep.NotFixed = append(rep.NotFixed, NotFixed{Line: line, Reason: fmt.Sprintf(
				"the row cannot be read (see the error on line %d), so --fix cannot tell which | is text or which cell is missing; edit the line by hand", line)})
		}
	}
	return rep, nil
}

// lineMap maps line numbers between the matrix as it was and as the fix
// leaves it: each joined row's lines become its first line.
type lineMap struct{ rows []RowFix } // the rows fixed, in file order

// fixed returns where line orig of the file as it was is in the fixed file.
func (m lineMap) fixed(orig int) int {
	shift := 0
	for _, r := range m.rows {
		if r.Line >= orig {
			break
		}
		if orig <= r.EndLine {
			return r.Line - shift
		}
		shift += r.EndLine - r.Line
	}
	return orig - shift
}

// original returns where line fixed of the fixed file was in the file as it
// was (a joined row: its first line).
func (m lineMap) original(fixed int) int {
	shift := 0
	for _, r := range m.rows {
		if r.Line-shift > fixed {
			break
		}
		if r.Line-shift == fixed {
			return r.Line
		}
		shift += r.EndLine - r.Line
	}
	return fixed + shift
}

// testHookAfterReadmes, when set, runs after the READMEs are written and
// before the matrix is; an error simulates a failed matrix write.
var testHookAfterReadmes func() error

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// plan is what one pass over the matrix changes: the doc is edited in place,
// the READMEs are only computed.
type plan struct {
	rows          []RowFix
	notFixed      []NotFixed
	files         []FileChange // READMEs, to write before the matrix
	canonicalized int
}

// run is one Run's settings.
type run struct {
	ws           *workspace.Workspace
	o            Options
	tmpl         string      // the README template (dry runs of Move)
	sc           *scaffolded // the folders Run created (nil in a dry run)
	matrixRel    string
	canonicalize bool
}

// plan rewrites every continued row of d, then canonicalizes aliases when
// the vocabulary asks for it. The READMEs of moved rows are only computed.
func (r *run) plan(d *matrix.Doc) (*plan, error) {
	type candidate struct {
		fx     RowFix
		cells  []string
		change *FileChange
	}
	p := &plan{}
	count := idCounts(d)
	var cands []candidate
	for _, cr := range d.ContinuedRows() {
		if col := brokenValue(cr); col != "" {
			// Joining would change the value (an ID would no longer be the
			// task's ID): a person must say what it is.
			p.notFixed = append(p.notFixed, NotFixed{ID: cr.ID, Line: cr.Line, endLine: cr.EndLine, why: fmt.Sprintf(
				"its %s cell goes on over several lines; that cell holds one value, not text, so --fix does not join it: write the value on the row's first line by hand", col)})
			continue
		}
		c := candidate{fx: RowFix{ID: cr.ID, Line: cr.Line, EndLine: cr.EndLine, Action: "joined"}}
		desc := descriptionIndex(cr)
		if r.o.Mode == Move {
			var readme, why string
			readme, c.change, why = r.moveTarget(d, cr, desc, count)
			if readme != "" {
				c.fx.Action, c.fx.Readme = "moved", readme
			}
			c.fx.Note = why
		}
		c.cells = make([]string, len(cr.Cells))
		for j, cell := range cr.Cells {
			switch {
			case c.fx.Readme != "" && j == desc:
				c.cells[j] = matrix.EscapePipes(FirstSentence(cell))
			case strings.Contains(cell, "\n"):
				c.cells[j] = matrix.JoinCell(cell)
			default:
				c.cells[j] = matrix.EscapePipes(strings.TrimSuffix(cell, "\r"))
			}
		}
		cands = append(cands, c)
	}
	edits := make([]matrix.RowEdit, len(cands))
	for i, c := range cands {
		edits[i] = matrix.RowEdit{Line: c.fx.Line, Cells: c.cells}
	}
	done := make([]bool, len(cands))
	err := replaceRows(d, edits) // one parse for all rows
	switch {
	case err == nil:
		for i := range done {
			done[i] = true
		}
	case errors.Is(err, matrix.ErrRefused) || errors.Is(err, matrix.ErrInvalid):
		// Some row does not read back: replace them one at a time, bottom
		// up so that the line numbers of the rows above stay right, and
		// name the ones that fail.
		for i := len(cands) - 1; i >= 0; i-- {
			c := cands[i]
			if err := d.ReplaceRowAt(c.fx.Line, c.cells); err != nil {
				if !errors.Is(err, matrix.ErrRefused) && !errors.Is(err, matrix.ErrInvalid) {
					return nil, err
				}
				p.notFixed = append(p.notFixed, NotFixed{ID: c.fx.ID, Line: c.fx.Line, endLine: c.fx.EndLine,
					why: "its one-line form would not read back as the same row; join its lines by hand, writing a line break as <br> and a | as \\|"})
				continue
			}
			done[i] = true
		}
	default:
		return nil, err
	}
	// Lines of the file as it is; report names them where the user finds them.
	sort.SliceStable(p.notFixed, func(i, j int) bool { return p.notFixed[i].Line < p.notFixed[j].Line })
	for i, c := range cands {
		if !done[i] {
			continue
		}
		p.rows = append(p.rows, c.fx)
		if c.change != nil {
			p.files = append(p.files, *c.change) // one per ID: duplicated IDs are joined
		}
	}
	if r.canonicalize {
		p.canonicalized = d.CanonicalizeAliases()
	}
	return p, nil
}

// brokenValue names the first column of the row whose cell holds a line
// break although it holds a value (ID, Status, Pri, Diff, Created,
// Updated), or "".
func brokenValue(cr matrix.ContinuedRow) string {
	for i, c := range cr.Cells {
		switch col := matrix.CanonicalColumn(cr.Columns[i]); col {
		case matrix.ColID, matrix.ColStatus, matrix.ColPri, matrix.ColDiff, matrix.ColCreated, matrix.ColUpdated:
			if strings.Contains(c, "\n") {
				return col
			}
		}
	}
	return ""
}

// replaceRows is Doc.ReplaceRowsAt; tests swap it to take the one-at-a-time
// path.
var replaceRows = (*matrix.Doc).ReplaceRowsAt

// descriptionIndex is the Description column of the row's table, or -1.
func descriptionIndex(cr matrix.ContinuedRow) int {
	for i, c := range cr.Columns {
		if matrix.CanonicalColumn(c) == matrix.ColDescription {
			return i
		}
	}
	return -1
}

// writeReadmes writes the READMEs of the plan, each atomically.
func (p *plan) writeReadmes(ws *workspace.Workspace) error {
	for _, f := range p.files {
		path := filepath.Join(ws.Root, filepath.FromSlash(f.Path))
		if err := writeFile(path, []byte(f.after)); err != nil {
			return fmt.Errorf("write %s (the matrix is unchanged): %w", f.Path, err)
		}
	}
	return nil
}
