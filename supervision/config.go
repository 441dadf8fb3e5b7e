// Package supervision holds what the supervised runs share: the
// supervision section of .agent/config.yaml and who the person at this
// terminal is. Its subpackage policy decides what needs a person.
package supervision

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/workspace"
)

// Config is the supervision section of .agent/config.yaml:
//
//	supervision:
//	  max_concurrent_sessions: 3   # active or paused at once
//	  operators: ["@ana", "bo"]    # may decide any session's requests
//	  mode: local                  # local | remote | hybrid (new sessions)
type Config struct {
	MaxConcurrentSessions int      `yaml:"max_concurrent_sessions"`
	Operators             []string `yaml:"operators"`
	Mode                  string   `yaml:"mode"`
}

// LoadConfig reads the supervision section (defaults when missing).
func LoadConfig(ws *workspace.Workspace) (Config, error) {
	var f struct {
		Supervision Config `yaml:"supervision"`
	}
	b, err := os.ReadFile(ws.ConfigPath())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Config{}, err
	}
	if len(b) > 0 {
		if err := yaml.Unmarshal(b, &f); err != nil {
			return Config{}, fmt.Errorf("%s: supervision: %v", ws.ConfigPath(), err)
		}
	}
	c := f.Supervision
	if c.MaxConcurrentSessions == 0 {
		c.MaxConcurrentSessions = store.DefaultMaxSessions
	}
	if c.Mode == "" {
		c.Mode = store.ModeLocal
	}
	return c, nil
}

// StoreOptions are the store's options under this config.
func (c Config) StoreOptions() store.Options {
	return store.Options{MaxSessions: c.MaxConcurrentSessions, Operators: c.Operators}
}

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
