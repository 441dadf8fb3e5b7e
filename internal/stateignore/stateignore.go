// Package stateignore writes the .gitignore files that keep agentinfra's
// machine-local state out of git: .agent/fleet/ (the fleet's agents, runs,
// history) and .agent/state/ (the supervision database). It lives apart
// from fleet and store, which own that state, so that `agentinfra init`
// writes both files without linking the fleet or the database (the light
// binary, cmd/agentinfra).
package stateignore

import (
	"os"
	"path/filepath"

	"github.com/agentinfra/agentinfra/internal/atomicfile"
)

// Fleet makes git ignore agentDir/fleet (the fleet's state) with a
// .gitignore of its own, so no repository file needs editing. Idempotent;
// created says whether it wrote the file.
func Fleet(agentDir string) (created bool, err error) {
	return write(filepath.Join(agentDir, "fleet"), 0o755,
		"# agentinfra fleet state (agents, runs, history): local to this machine\n*\n")
}

// State makes git ignore agentDir/state (the database and its WAL) with a
// .gitignore of its own; the folder is private to its owner (0700).
// Idempotent; created says whether it wrote the file.
func State(agentDir string) (created bool, err error) {
	return write(filepath.Join(agentDir, "state"), 0o700,
		"# agentinfra state (supervised sessions, approvals, audit log): local to this machine\n*\n")
}

func write(dir string, perm os.FileMode, content string) (bool, error) {
	if err := os.MkdirAll(dir, perm); err != nil {
		return false, err
	}
	p := filepath.Join(dir, ".gitignore")
	if _, err := os.Stat(p); err == nil {
		return false, nil
	}
	return true, atomicfile.Write(p, []byte(content))
}
