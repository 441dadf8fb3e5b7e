package local

import (
	"context"
	"errors"
	"os"
	"strings"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/agentrun"
	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/statefile"
)

// findRun returns the run runID of agent name ("" = current, else last),
// and whether it is the current, live one.
func (f *Fleet) findRun(ctx context.Context, name, runID string) (fleet.TaskRun, bool, error) {
	a, r, err := f.current(ctx, name)
	if err != nil {
		return fleet.TaskRun{}, false, err
	}
	if r != nil && (runID == "" || strings.EqualFold(runID, r.ID)) {
		return r.TaskRun, r.Supervisor.alive(), nil
	}
	runs, err := f.finishedRuns(ctx, a.Name)
	if err != nil {
		return fleet.TaskRun{}, false, err
	}
	for i := len(runs) - 1; i >= 0; i-- {
		if runID == "" || strings.EqualFold(runs[i].ID, runID) {
			return runs[i], false, nil
		}
	}
	if runID == "" {
		return fleet.TaskRun{}, false, agenterr.Conflictf("agent %s has no runs yet: nothing to show", a.Name)
	}
	return fleet.TaskRun{}, false, agenterr.NotFoundf("run", "agent %s has no run %q: agent history %s lists its runs", a.Name, runID, a.Name)
}

// Logs returns a run's log (see LogReader).
func (f *Fleet) Logs(ctx context.Context, name, runID string, tail int) (fleet.LogsResult, error) {
	if tail < 0 {
		return fleet.LogsResult{}, agenterr.Invalidf("tail", "tail %d is out of range: give 0 (all) or more", tail)
	}
	tr, live, err := f.findRun(ctx, name, runID)
	if err != nil {
		return fleet.LogsResult{}, err
	}
	items, err := agentrun.ReadLog(f.p.logFile(tr.AgentName, tr.ID))
	if err != nil {
		return fleet.LogsResult{}, err
	}
	out := fleet.LogsResult{Run: tr.Normalized(), Items: []events.RunItem{}, TotalCount: len(items), Live: live}
	if tail > 0 && len(items) > tail {
		items = items[len(items)-tail:]
	}
	out.Items = append(out.Items, items...)
	return out, nil
}

// FollowLogs streams a run's log (see LogReader). The items come through
// the process's bus: a watcher of the log file (written by the run's
// detached supervisor) publishes them as run events, which this
// subscription reads.
func (f *Fleet) FollowLogs(ctx context.Context, name, runID string, fn func(events.RunItem) error) (fleet.TaskRun, error) {
	tr, _, err := f.findRun(ctx, name, runID)
	if err != nil {
		return fleet.TaskRun{}, err
	}
	path := f.p.logFile(tr.AgentName, tr.ID)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) && tr.CompletedAt != nil {
		return tr, nil // a run from before logs were kept
	}
	bus := f.bus()
	sub := bus.Subscribe(events.Filter{Kinds: []events.Kind{events.RunEvent}, Root: f.ws.Root, RunID: tr.ID}, 4096)
	defer sub.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	tailed := make(chan error, 1)
	go func() {
		tailed <- agentrun.WatchLog(ctx, path, func() bool { return f.runLive(tr.AgentName, tr.ID) }, bus,
			events.Event{Root: f.ws.Root, Agent: tr.AgentName, TaskID: tr.TaskID, RunID: tr.ID})
	}()
	var last int64
	for {
		select {
		case <-sub.Ready():
		case err := <-tailed:
			// The watcher is done: what it published is queued.
			for {
				e, ok := sub.TryNext()
				if !ok {
					return tr, err
				}
				if err := f.deliver(e, path, &last, fn); err != nil {
					return tr, ignoreEnd(err)
				}
			}
		case <-ctx.Done():
			return tr, ctx.Err()
		}
		for {
			e, ok := sub.TryNext()
			if !ok {
				break
			}
			if err := f.deliver(e, path, &last, fn); err != nil {
				return tr, ignoreEnd(err)
			}
		}
	}
}

var errLogEnded = errors.New("the run's log ended")

func ignoreEnd(err error) error {
	if errors.Is(err, errLogEnded) {
		return nil
	}
	return err
}

// deliver passes one followed item to fn, once (by its seq). After a
// lagged marker (the subscription fell behind and lost items) the log file
// is read again for what was lost.
func (f *Fleet) deliver(e events.Event, path string, last *int64, fn func(events.RunItem) error) error {
	one := func(it events.RunItem) error {
		if it.Seq <= *last {
			return nil
		}
		*last = it.Seq
		if err := fn(it); err != nil {
			return err
		}
		if it.Kind == agentrun.ItemEnded {
			return errLogEnded
		}
		return nil
	}
	if e.Kind == events.Lagged {
		items, err := agentrun.ReadLog(path)
		if err != nil {
			return err
		}
		for _, it := range items {
			if err := one(it); err != nil {
				return err
			}
		}
		return nil
	}
	if e.Run == nil {
		return nil
	}
	return one(*e.Run)
}

// runLive says whether run runID of agent name is still the current one
// with a live supervisor.
func (f *Fleet) runLive(name, runID string) bool {
	var r runRecord
	ok, _ := statefile.ReadJSON(f.p.file(name, runFile), &r)
	return ok && r.ID == runID && r.Supervisor.alive()
}
