package fleet

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"

	"github.com/agentinfra/agentinfra/internal/atomicfile"
	"github.com/agentinfra/agentinfra/internal/jsonout"
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

// lockTimeout bounds a wait for a fleet lock.
const lockTimeout = 30 * time.Second

type paths struct{ root string }

func newPaths(ws *workspace.Workspace) paths {
	return paths{root: filepath.Join(ws.AgentDir(), "fleet")}
}

func (p paths) agentDir(name string) string { return filepath.Join(p.root, "agents", key(name)) }
func (p paths) agentsDir() string           { return filepath.Join(p.root, "agents") }
func (p paths) agentLock(name string) string {
	return filepath.Join(p.root, "locks", key(name)+".lock")
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
func WriteIgnore(agentDir string) (created bool, err error) {
	dir := filepath.Join(agentDir, "fleet")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, err
	}
	p := filepath.Join(dir, ".gitignore")
	if _, err := os.Stat(p); err == nil {
		return false, nil
	}
	return true, atomicfile.Write(p, []byte("# agentinfra fleet state (agents, runs, history): local to this machine\n*\n"))
}

// withLock runs fn holding the lock file at path.
func withLock(ctx context.Context, path string, fn func() error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	fl := flock.New(path)
	lctx, cancel := context.WithTimeout(ctx, lockTimeout)
	defer cancel()
	ok, err := fl.TryLockContext(lctx, 5*time.Millisecond)
	if err != nil || !ok {
		return unavailable(err, "could not lock %s within %s: another agentinfra process holds it", path, lockTimeout)
	}
	defer fl.Unlock()
	return fn()
}

func writeJSON(path string, v any) error {
	b, err := jsonout.Marshal(v)
	if err != nil {
		return err
	}
	return atomicfile.Write(path, b)
}

// readJSON reads path into v; ok is false when the file does not exist.
func readJSON(path string, v any) (ok bool, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	return true, nil
}

// appendLine appends one JSON line and syncs it: the history is append-only.
func appendLine(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	if serr := f.Sync(); err == nil {
		err = serr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// readLines decodes every JSON line of path; a torn last line (a crash in
// the middle of an append) is skipped.
func readLines[T any](path string) ([]T, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []T
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var v T
		if json.Unmarshal(sc.Bytes(), &v) == nil {
			out = append(out, v)
		}
	}
	return out, sc.Err()
}
