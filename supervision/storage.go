package supervision

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/contain"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/workspace"
)

// StorageFailure is one line of the log of storage failures: a database
// lost under a run, a request denied because it could not be recorded, a
// reset.
type StorageFailure = store.Failure

// StorageFailuresPath is the log of storage failures of ws.
func StorageFailuresPath(ws *workspace.Workspace) string {
	return filepath.Join(store.StateDir(ws), store.FailuresFile)
}

// StorageFailures reads ws's log of storage failures, oldest first.
func StorageFailures(ws *workspace.Workspace) ([]StorageFailure, error) {
	return store.Failures(store.StateDir(ws))
}

// ResetDB moves ws's database aside (kept, renamed) and creates a fresh
// one: the recovery step of a damaged database (store.Reset; a healthy one
// only with force). It opens no service first: that is what fails. Refused
// from inside an agent's run (by its marker: the sandbox hides the
// database from a run anyway). db is the database, aside the old file's
// new name.
func ResetDB(ctx context.Context, ws *workspace.Workspace, force bool, now time.Time) (db, aside string, err error) {
	if m, inside := contain.RunOf(os.Getpid(), nil); inside {
		return "", "", &agenterr.Error{Kind: agenterr.Forbidden, Field: "caller", Err: ErrInsideRun,
			Reason: fmt.Sprintf("refused: this command runs inside agent run %s; a person resets the database from outside the agent's processes", m.RunID())}
	}
	db = store.PathIn(ws)
	if aside, err = store.Reset(ctx, db, force, now); err != nil {
		return db, aside, err
	}
	text := "a fresh database was created"
	if aside != "" {
		text = "the database was moved aside to " + aside + " and a fresh one created"
	}
	store.NoteFailure(store.StateDir(ws), store.Failure{What: "reset", Text: text + " (agentinfra session reset-db)"})
	return db, aside, nil
}
