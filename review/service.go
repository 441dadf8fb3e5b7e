// Package review turns a finished task into a reviewed change on the base
// branch: the work an agent's run leaves on its branch becomes one
// reviewable change (Record), a person looks at it (List, Show, Diff),
// sends it back with comments (RequestChanges, Prompt) or lands it
// (Approve) after its checks (Check); the agent's next task starts from the
// current base (PrepareBranch).
//
// git is the library: every merge, diff and ref update is a git process
// (merge-tree --write-tree, commit-tree, update-ref with the expected old
// value, read-tree -m -u), never a merge or diff of our own, and no shell
// runs between us and git or a check.
//
// The state of a change is the task's: .agent/tasks/{id}_{slug}/change.json
// (the record: branch, base, commits, checks, comments, landing), the task
// README's Review section (the same story in words, readable in git), the
// task's status in the matrix (moved by package task's lifecycle), and a
// ref refs/agentinfra/changes/{id} that keeps the change's last commit in
// the repository until it lands.
//
// Safety: a rejected operation changes nothing; a landing is a
// compare-and-set of the base branch; a worktree that has the base branch
// checked out is updated the way git checkout would (files the change
// touches must be clean there), else the landing is refused naming the
// files; an agent's branch is never moved over work that no change
// records. Operations that write take the repository's review lock
// (LockName), then, for the task's files, the matrix lock.
package review

import (
	"time"

	"github.com/agentinfra/agentinfra/config"
	"github.com/agentinfra/agentinfra/workspace"
)

// Service is the review of the changes of one workspace's tasks.
type Service struct {
	ws  *workspace.Workspace
	now func() time.Time
}

// New returns the review service of ws; now is the clock (nil: time.Now).
func New(ws *workspace.Workspace, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{ws: ws, now: now}
}

// The defaults of the review section.
const (
	DefaultStrategy     = "squash"
	DefaultCheckTimeout = 10 * time.Minute
)

// settings is the workspace's review section with its defaults.
func (s *Service) settings() (config.Review, error) {
	c, err := s.ws.Config()
	if err != nil {
		return config.Review{}, err
	}
	r, err := c.Review()
	if err != nil {
		return config.Review{}, err
	}
	if r.Strategy == "" {
		r.Strategy = DefaultStrategy
	}
	if r.CheckTimeout == 0 {
		r.CheckTimeout = DefaultCheckTimeout
	}
	return r, nil
}
