// Package keepmoving runs a supervised session so that it does not just
// stop or hang unnoticed: the stall watchdog nudges a silent agent through
// its bridge, a turn that ends short, with a question or on an error asks
// the operator (a continuation prompt: continue, refine with a new
// instruction, stop), steering messages from any surface are delivered as
// the next user message, and an approved edit may be preceded by a
// checkpoint. Everything is recorded in the store and published on the
// events bus (console, Slack).
//
// Run replaces bridge.Run for a supervised session; dispatch and the fleet
// call it where they call the bridge (the hook point: the exec step of a
// supervised run).
package keepmoving

import (
	"encoding/json"
	"time"

	"github.com/agentinfra/agentinfra/config"
	"github.com/agentinfra/agentinfra/supervision/watchdog"
	"github.com/agentinfra/agentinfra/workspace"
)

// When to ask the operator at the end of a turn (prompts.ask).
const (
	AskAlways             = config.AskAlways
	AskNever              = config.AskNever
	AskQuestionsAndErrors = config.AskQuestionsAndErrors // the default
)

// Config is the supervision section of .agent/config.yaml
// (config.Supervision, decoded and checked with every other section, once
// per workspace); keep-moving reads its watchdog, prompts, budget,
// checkpoint_before_edit and retention_days.
type Config = config.Supervision

// Defaults.
const (
	DefaultPromptTimeout = 30 * time.Minute
	DefaultRetentionDays = 30
	DefaultContinue      = "Continue with the task."
	// WarnAt is the share of a budget that raises a resource_warning.
	WarnAt = 0.8
)

// watchdogConfig is the watchdog's part of c.
func watchdogConfig(c Config) watchdog.Config {
	return watchdog.Config(c.Watchdog)
}

func withDefaults(c Config) Config {
	if c.Prompts.Ask == "" {
		c.Prompts.Ask = AskQuestionsAndErrors
	}
	if c.Prompts.Timeout == 0 {
		c.Prompts.Timeout = DefaultPromptTimeout
	}
	if c.Prompts.StopStatus == "" {
		c.Prompts.StopStatus = "review"
	}
	if c.Prompts.Continue == "" {
		c.Prompts.Continue = DefaultContinue
	}
	if c.RetentionDays == 0 {
		c.RetentionDays = DefaultRetentionDays
	}
	return c
}

// LoadConfig is the workspace's supervision section (ws.Config) with the
// keep-moving defaults filled in (the watchdog fills its own). A wrong
// section is an Invalid error naming the file, the line, the column and
// the key.
func LoadConfig(ws *workspace.Workspace) (Config, error) {
	wc, err := ws.Config()
	if err != nil {
		return Config{}, err
	}
	c, err := wc.Supervision()
	if err != nil {
		return Config{}, err
	}
	return withDefaults(c), nil
}

// Retention is how long ended sessions are kept under c.
func Retention(c Config) time.Duration {
	return time.Duration(withDefaults(c).RetentionDays) * 24 * time.Hour
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
