package resume

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/agentinfra/agentinfra/dispatch"
	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision"
	"github.com/agentinfra/agentinfra/workspace"
)

// RunDispatch runs the resumed run of a dispatch's session id in this
// process, its supervisor (the hidden `agentinfra session run-resumed`,
// which Resume starts detached): a dispatch of the run's task through the
// same CLI, model and mode, on the CLI's own session. by resumed it (auto:
// supervision.resume did). The error is the run's.
func RunDispatch(ctx context.Context, ws *workspace.Workspace, id int64, by string, auto bool, getenv func(string) string) (dispatch.Outcome, error) {
	conf, err := supervision.LoadConfig(ws)
	if err != nil {
		return dispatch.Outcome{}, err
	}
	st, err := store.OpenWorkspace(ctx, ws, supervision.StoreOptions(conf))
	if err != nil {
		return dispatch.Outcome{}, err
	}
	ses, err := st.Session(ctx, id)
	if err != nil {
		st.Close()
		return dispatch.Outcome{}, err
	}
	row, err := st.Run(ctx, ses.RunID)
	var rec dispatch.Outcome
	if err == nil {
		err = jsonRecord(row, &rec)
	}
	if err != nil {
		st.Close()
		return dispatch.Outcome{}, fmt.Errorf("the run session %d resumes: %w", id, err)
	}
	native, err := st.NativeSession(ctx, id)
	if err != nil {
		st.Close()
		return dispatch.Outcome{}, err
	}
	done, err := Done(ctx, st, ses, by, auto)
	n, _ := st.Resumes(ctx, id)
	st.Close()
	if err != nil {
		return dispatch.Outcome{}, err
	}
	actor, why := reason(by, auto, n, conf.MaxResumes)
	timeout, _ := time.ParseDuration(rec.Timeout)
	bin := rec.Binary
	if _, err := os.Stat(bin); err != nil {
		bin = "" // looked up again
	}
	opts := dispatch.Options{ID: rec.TaskID, Mode: rec.Mode, TaskOverride: rec.TaskOverride, ContextFiles: rec.ContextFiles, Model: rec.Model, CLI: rec.CLI, Session: native, ApprovalMode: runner.ApprovalAsk,
		Timeout: timeout, Actor: string(actor), Getenv: getenv, Binary: bin, Owner: ses.Owner, Exclusive: true,
		Resume: &dispatch.Resume{Session: id, Native: native, Message: Message(ses, by, auto), Done: done, By: actor, Why: why}}
	return dispatch.Run(ctx, ws, opts, nil)
}
