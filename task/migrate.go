package task

import (
	"context"
	"time"

	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/workspace"
)

// Migrate converts the matrix's older Item tables into one task table (see
// matrix.Doc.Migrate). It holds the matrix lock and replaces the file atomically;
// nothing is written when it fails.
func Migrate(ctx context.Context, ws *workspace.Workspace, now time.Time) (matrix.Migration, error) {
	// The converted table is written in the default words: no vocabulary,
	// and a config migrate cannot use is no reason to refuse it.
	s := writerStore(ws, matrix.NewStore(ws.MatrixPath()))
	// Refuse before locking: the lock file appears with the first write, and
	// a refused migrate must leave the folder as it was.
	d, err := s.Load(ctx)
	if err != nil {
		return matrix.Migration{}, err
	}
	if m, err := d.Migrate(now); err != nil || m.AlreadyMigrated {
		return m, err // migrated already: nothing to write
	}
	var m matrix.Migration
	_, err = s.Modify(ctx, func(d *matrix.Doc) error {
		var err error
		m, err = d.Migrate(now)
		return err
	})
	return m, err
}

// ColumnsAdded is what AddColumns did (or, in a dry run, would do).
type ColumnsAdded struct {
	Tables []matrix.TableColumns `json:"tables"`
	// Before and After are the matrix's bytes (After == Before when nothing
	// was missing).
	Before []byte `json:"-"`
	After  []byte `json:"-"`
}

// AddColumns adds to the matrix's task tables the standard columns of cols
// (canonical names; empty: every standard column) they lack
// (matrix.Doc.AddColumns). An Agents column added gets, for each IN_PROGRESS
// task, the holder its README's status log records (holder.go), so no claim
// is lost by the move. It holds the lock and replaces the file atomically;
// a dry run reads and computes only. Nothing missing changes nothing.
func AddColumns(ctx context.Context, ws *workspace.Workspace, cols []string, dryRun bool) (ColumnsAdded, error) {
	s, err := OpenStore(ws)
	if err != nil {
		return ColumnsAdded{}, err
	}
	var res ColumnsAdded
	add := func(d *matrix.Doc) error {
		res = ColumnsAdded{Before: append([]byte(nil), d.Bytes()...)}
		fill := map[string]map[string]string{}
		for _, t := range d.Tasks() {
			if !d.RowHasColumn(t.ID, matrix.ColAgents) && IsStatus(d.Vocabulary(), t, StatusInProgress) {
				if h := readmeHolderOf(ws, d, t.ID); h != "" {
					fill[t.ID] = map[string]string{matrix.ColAgents: h}
				}
			}
		}
		var err error
		res.Tables, err = d.AddColumns(cols, fill)
		res.After = d.Bytes()
		return err
	}
	// Plan without the lock first: a dry run stops here, and with nothing
	// to add nothing is touched, not even the lock file.
	d, err := s.Load(ctx)
	if err != nil {
		return ColumnsAdded{}, err
	}
	if err := add(d); err != nil || dryRun || len(res.Tables) == 0 {
		return res, err
	}
	_, err = s.Modify(ctx, add)
	return res, err
}
