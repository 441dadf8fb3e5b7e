// Package supervision is the supervised runs' service (Service): the one
// way the surfaces read and change supervision state, with one rule of who
// may (authorise), the store's compare-and-set, and an event for every
// change. It also holds the supervision section of .agent/config.yaml and
// who the person at this terminal is. Its subpackage policy decides what
// needs a person.
package supervision

import (
	"os/user"
	"strings"

	"github.com/agentinfra/agentinfra/config"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/workspace"
)

// Config is the supervision section of .agent/config.yaml
// (config.Supervision, decoded with every other section, once per
// workspace):
//
//	supervision:
//	  max_concurrent_sessions: 3   # active or paused at once
//	  operators: ["@ana", "bo"]    # may decide any session's requests
//	  mode: local                  # local | remote | hybrid (new sessions)
//	  resume: auto                 # manual (default) | auto
//	  max_resumes: 3               # automatic resumes of one run
type Config = config.Supervision

// LoadConfig is the workspace's supervision section (ws.Config), with the
// defaults filled in. A wrong section is an Invalid error naming the file,
// the line and the key.
func LoadConfig(ws *workspace.Workspace) (Config, error) {
	wc, err := ws.Config()
	if err != nil {
		return Config{}, err
	}
	c, err := wc.Supervision()
	if err != nil {
		return Config{}, err
	}
	if c.MaxConcurrentSessions == 0 {
		c.MaxConcurrentSessions = store.DefaultMaxSessions
	}
	if c.Mode == "" {
		c.Mode = store.ModeLocal
	}
	if c.Resume == "" {
		c.Resume = config.ResumeManual
	}
	if c.MaxResumes == 0 {
		c.MaxResumes = DefaultMaxResumes
	}
	return c, nil
}

// DefaultMaxResumes is supervision.max_resumes when the config does not
// say: how many times supervision.resume auto resumes one run.
const DefaultMaxResumes = 3

// EnvUser names the variable that says who the person at this terminal is.
const EnvUser = "AGENTINFRA_USER"

// CurrentUser is $AGENTINFRA_USER, else the login name.
func CurrentUser(getenv func(string) string) string {
	if u := strings.TrimPrefix(strings.TrimSpace(getenv(EnvUser)), "@"); u != "" {
		return u
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "unknown"
}
