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
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/config"
	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/workspace"
)

// Service is the review of the changes of one workspace's tasks: the one
// way the surfaces (the terminal, the console, the MCP server, Slack) and
// the fleet's run end read and move a change. Every move is published on
// the events bus (events.ChangeReviewed).
type Service struct {
	ws    *workspace.Workspace
	now   func() time.Time
	bus   *events.Bus
	fleet fleet.Backend
}

// Options make a Service.
type Options struct {
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// Bus receives every move of a change (nil: events.Default()).
	Bus *events.Bus
	// Fleet is where the agents are: a change sent back goes to its agent
	// (Deliver), a change that reaches review to the reviewer
	// (review.reviewer). nil: nobody is started; the changes wait, and the
	// fleet's next run end delivers them.
	Fleet fleet.Backend
}

// New returns the review service of ws; now is the clock (nil: time.Now).
// It starts no agent (Options.Fleet).
func New(ws *workspace.Workspace, now func() time.Time) *Service {
	return NewService(ws, Options{Now: now})
}

// NewService returns the review service of ws with o.
func NewService(ws *workspace.Workspace, o Options) *Service {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Bus == nil {
		o.Bus = events.Default()
	}
	return &Service{ws: ws, now: o.Now, bus: o.Bus, fleet: o.Fleet}
}

// HasChecks reports whether review.checks are configured (false when the
// configuration cannot be read: Check says why).
func (s *Service) HasChecks() bool {
	set, err := s.settings()
	return err == nil && len(set.Checks) > 0
}

// The moves of a change, as events.ChangeReviewed's Status says them.
const (
	MoveRecorded  = "recorded"
	MoveChecked   = "checked"
	MoveVerdict   = "verdict"
	MoveChanges   = "changes_requested"
	MoveDelivered = "delivered"
	MoveLanded    = "landed"
	MoveConflict  = "conflict"
)

// publish says on the bus that c moved.
func (s *Service) publish(c Change, move, text string, by string) {
	s.bus.Publish(events.Event{Kind: events.ChangeReviewed, Root: s.ws.Root, TaskID: c.Task, Agent: fleet.Key(strings.TrimPrefix(c.Agent, "@")),
		Status: move, Text: text, Actor: by})
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
