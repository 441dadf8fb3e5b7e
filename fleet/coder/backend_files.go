package coder

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/statefile"
	"github.com/agentinfra/agentinfra/internal/stateignore"
)

// The Coder backend's files, under .agent/fleet/coder/ (ignored by git
// with the rest of .agent/fleet/):
//
//	locks/{name}.lock             held while one agent's files change
//	agents/{name}/agent.json      what Coder cannot hold: spec, role, CLI
//	agents/{name}/history.jsonl   the runs agentinfra started, one line per
//	                              change of a run (the last line of an ID wins)
//	agents/{name}/host-token      a supervised agent's host token (0600)
//	host-numbers                  the last number given to a host
//	archive/{name}-{stamp}/       the folder of a deleted agent
type files struct{ root string }

func (f files) agentDir(name string) string {
	return filepath.Join(f.root, "agents", strings.ToLower(name))
}
func (f files) lock(name string) string {
	return filepath.Join(f.root, "locks", strings.ToLower(name)+".lock")
}
func (f files) record(name string) string  { return filepath.Join(f.agentDir(name), "agent.json") }
func (f files) history(name string) string { return filepath.Join(f.agentDir(name), "history.jsonl") }

func (f files) ensure(name string) error {
	if err := os.MkdirAll(f.agentDir(name), 0o755); err != nil {
		return err
	}
	_, err := stateignore.Fleet(filepath.Dir(filepath.Dir(f.root)))
	return err
}

// agentRecord is agent.json: what agentinfra knows of an agent that Coder
// does not keep. WorkspaceID ties it to one workspace: a record of an
// earlier workspace of the same name is not this agent's.
type agentRecord struct {
	Name        string    `json:"name"`
	WorkspaceID string    `json:"workspace_id"`
	TemplateID  string    `json:"template_id"`
	PresetID    string    `json:"preset_id,omitempty"`
	Role        string    `json:"role"`
	Project     string    `json:"project"`
	Spec        string    `json:"spec"`
	CLI         string    `json:"cli"`
	CreatedAt   time.Time `json:"created_at"`
	// Runs counts the runs started (run IDs are {name}-{n}).
	Runs int `json:"runs"`
	// Host is set for a supervised agent (approval mode ask): it runs
	// under agentinfra's host in its workspace (host.go).
	Host *hostRecord `json:"host,omitempty"`
}

// runLine is one line of history.jsonl: a run as it was at a change.
type runLine struct {
	fleet.TaskRun
	// Baseline is the ID of the workspace's latest app status when the run
	// was given ("" for none): a later status that is not "working" says
	// the run ended.
	Baseline string `json:"baseline_app_status,omitempty"`
	// Sent says the task went as an AgentAPI message, so that the AgentAPI
	// answering "stable" afterwards means the run ended. The spec's run
	// goes in the prompt parameter instead and ends on the app's status.
	Sent bool `json:"sent,omitempty"`
	// HostRun is the run's ID on a supervised agent's host ("" for the
	// spec's run, which the host starts by itself: its first).
	HostRun string `json:"host_run,omitempty"`
}

func (l runLine) open() bool {
	return l.Status == fleet.RunPending || l.Status == fleet.RunRunning
}

// loadRecord reads an agent's record; nil when there is none or it belongs
// to another workspace than wsID ("" matches any).
func (f files) loadRecord(name, wsID string) (*agentRecord, error) {
	var r agentRecord
	ok, err := statefile.ReadJSON(f.record(name), &r)
	if err != nil || !ok || (wsID != "" && r.WorkspaceID != wsID) {
		return nil, err
	}
	return &r, nil
}

// runs reads an agent's runs, oldest first, each as its last line says.
func (f files) runs(name string) ([]runLine, error) {
	lines, err := statefile.ReadLines[runLine](f.history(name))
	if err != nil {
		return nil, err
	}
	idx := map[string]int{}
	var out []runLine
	for _, l := range lines {
		if i, ok := idx[l.ID]; ok {
			out[i] = l
			continue
		}
		idx[l.ID] = len(out)
		out = append(out, l)
	}
	return out, nil
}

// current is the agent's open run (the last run, if it is pending or
// running).
func current(runs []runLine) *runLine {
	if len(runs) == 0 || !runs[len(runs)-1].open() {
		return nil
	}
	r := runs[len(runs)-1]
	return &r
}

// archive moves an agent's folder to archive/ and returns where to ("" when
// it had none). The caller holds the agent's lock.
func (f files) archive(name string, now time.Time) (string, error) {
	src := f.agentDir(name)
	if _, err := os.Stat(src); errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	dst := filepath.Join(f.root, "archive", fmt.Sprintf("%s-%s", strings.ToLower(name), now.Format("20060102T150405.000000000Z")))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", err
	}
	return dst, os.Rename(src, dst)
}

// withAgentLock runs fn holding the agent's lock.
func (f files) withAgentLock(ctx context.Context, name string, fn func() error) error {
	return statefile.WithLock(ctx, f.lock(name), fn)
}
