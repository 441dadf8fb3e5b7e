package local

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/fleet/statefile"
	"github.com/agentinfra/agentinfra/internal/fswatch"
)

// Watch brings the fleet's changes made by any process onto bus until ctx
// ends: AgentCreated and AgentDeleted when an agent's folder appears or
// goes, AgentChanged when its record or its current run's record changes
// (the run's supervisor recorded the CLI's process: starting → busy; a stop
// was asked: busy → stopping), RunStarted when a run begins and RunEnded
// when it is recorded (by its supervisor, a stop, or the next
// command that found its supervisor dead). A supervisor killed with SIGKILL
// changes no file: its liveness is checked every tick (default 1 s), and
// its death is an AgentChanged (whoever reads the agent then records the
// run). Events have Source "watch". It returns when ctx ends.
func (f *Fleet) Watch(ctx context.Context, bus *events.Bus, tick time.Duration) error {
	if tick <= 0 {
		tick = time.Second
	}
	if err := f.p.ensure(); err != nil {
		return err
	}
	os.MkdirAll(f.p.agentsDir(), 0o755)
	fw, err := fswatch.Watch(ctx, fswatch.Options{Tick: tick, Skip: func(p string) bool { return strings.HasSuffix(p, ".lock") }}, f.p.agentsDir())
	if err != nil {
		return fmt.Errorf("watch %s: %w", f.p.agentsDir(), err)
	}
	if err := fw.Add(f.p.agentsDir()); err != nil {
		return fmt.Errorf("watch %s: %w", f.p.agentsDir(), err)
	}
	seen := f.snapshot(fw)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-fw.C:
		}
		now := f.snapshot(fw)
		for _, e := range diffFleet(seen, now) {
			e.Root, e.Source = f.ws.Root, "watch"
			bus.Publish(e)
		}
		seen = now
	}
}

// agentState is what the watcher knows of one agent.
type agentState struct {
	record string // agent.json's stamp
	run    string // the current run's ID ("" = none)
	runRec string // run.json's stamp (its supervisor, its CLI's process, a stop)
	task   string // its matrix task
	alive  bool   // its supervisor is alive
}

// snapshot reads every agent's state (and watches its folder).
func (f *Fleet) snapshot(fw *fswatch.Watcher) map[string]agentState {
	names, _ := f.names()
	out := make(map[string]agentState, len(names))
	for _, n := range names {
		fw.Add(f.p.agentDir(n))
		st := agentState{record: fileStamp(f.p.file(n, agentFile))}
		if st.record == "" {
			continue // being created or archived
		}
		var r runRecord
		// A run whose supervisor is not recorded yet is being started (or
		// its start was refused or killed, and is rolled back): not a run.
		if ok, _ := statefile.ReadJSON(f.p.file(n, runFile), &r); ok && r.Supervisor.PID != 0 {
			st.run, st.task, st.alive = r.ID, r.TaskID, r.Supervisor.alive()
			st.runRec = fileStamp(f.p.file(n, runFile))
		}
		out[n] = st
	}
	return out
}

// diffFleet is the events between two snapshots.
func diffFleet(before, after map[string]agentState) []events.Event {
	var out []events.Event
	for n, a := range after {
		b, had := before[n]
		if !had {
			out = append(out, events.Event{Kind: events.AgentCreated, Agent: n})
		}
		if b.run != "" && b.run != a.run {
			out = append(out, events.Event{Kind: events.RunEnded, Agent: n, RunID: b.run, TaskID: b.task})
		}
		if a.run != "" && a.run != b.run {
			out = append(out, events.Event{Kind: events.RunStarted, Agent: n, RunID: a.run, TaskID: a.task})
		}
		sameRun := a.run == b.run
		if had && (a.record != b.record || sameRun && (a.alive != b.alive || a.runRec != b.runRec)) {
			out = append(out, events.Event{Kind: events.AgentChanged, Agent: n, RunID: a.run})
		}
	}
	for n, b := range before {
		if _, ok := after[n]; !ok {
			if b.run != "" {
				out = append(out, events.Event{Kind: events.RunEnded, Agent: n, RunID: b.run, TaskID: b.task})
			}
			out = append(out, events.Event{Kind: events.AgentDeleted, Agent: n})
		}
	}
	return out
}

// fileStamp says when a file changed ("" when it does not exist).
func fileStamp(p string) string {
	fi, err := os.Stat(p)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%d|%d", fi.Size(), fi.ModTime().UnixNano())
}
