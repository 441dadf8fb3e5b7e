package local

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/internal/stateignore"
	"github.com/agentinfra/agentinfra/workspace"
)

// The files of the fleet, under .agent/fleet/:
//
//	.gitignore                  "*": the fleet's state is never committed
//	fleet.lock                  held while a name is taken or given back
//	locks/{name}.lock           held while one agent's files change
//	agents/{name}/agent.json    the agent (replaced atomically)
//	agents/{name}/run.json      the current run, while there is one
//	agents/{name}/runs/{run}.*  a run's prompt, log (log.jsonl) and
//	                            supervisor log
//	archive/{name}-{stamp}/     the folder of a deleted agent
//
// The runs' records and the agents' histories are in the workspace's store
// (runstore.go); history.jsonl and runs/{run}.result.json are what an
// agentinfra before it wrote, imported once.
const (
	agentFile   = "agent.json"
	runFile     = "run.json"
	historyFile = "history.jsonl"
)

type paths struct{ root string }

func newPaths(ws *workspace.Workspace) paths {
	return paths{root: filepath.Join(ws.AgentDir(), "fleet")}
}

func (p paths) agentDir(name string) string { return filepath.Join(p.root, "agents", fleet.Key(name)) }
func (p paths) agentsDir() string           { return filepath.Join(p.root, "agents") }
func (p paths) agentLock(name string) string {
	return filepath.Join(p.root, "locks", fleet.Key(name)+".lock")
}
func (p paths) fleetLock() string             { return filepath.Join(p.root, "fleet.lock") }
func (p paths) archiveDir() string            { return filepath.Join(p.root, "archive") }
func (p paths) runsDir(name string) string    { return filepath.Join(p.agentDir(name), "runs") }
func (p paths) file(name, file string) string { return filepath.Join(p.agentDir(name), file) }

// logFile is a run's log: every event its agent CLI printed (JSONL).
func (p paths) logFile(name, runID string) string {
	return filepath.Join(p.runsDir(name), runID+".log.jsonl")
}

// ensure creates the fleet folder with its .gitignore.
func (p paths) ensure() error {
	if err := os.MkdirAll(filepath.Join(p.root, "locks"), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", p.root, err)
	}
	_, err := WriteIgnore(filepath.Dir(p.root))
	return err
}

// WriteIgnore makes git ignore agentDir/fleet (the fleet's state) with a
// .gitignore of its own, so no repository file needs editing. Idempotent;
// created says whether it wrote the file.
func WriteIgnore(agentDir string) (created bool, err error) { return stateignore.Fleet(agentDir) }
