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
	"errors"
	"fmt"
	"io/fs"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/agentinfra/agentinfra/internal/regularfile"
	"github.com/agentinfra/agentinfra/supervision/watchdog"
	"github.com/agentinfra/agentinfra/workspace"
)

// When to ask the operator at the end of a turn (prompts.ask).
const (
	AskAlways             = "always"               // every turn end that is not a clear finish
	AskNever              = "never"                // a turn end ends the run (as before)
	AskQuestionsAndErrors = "questions_and_errors" // only clarification and error_recovery (default)
)

// Config is the keep-moving part of the supervision section of
// .agent/config.yaml:
//
//	supervision:
//	  watchdog:
//	    threshold: 5m          # silence before a stall alert
//	    escalation_wait: 2m    # between nudges, and before escalating
//	    max_retries: 3         # nudges before escalating
//	    nudge: "…"             # the message sent
//	  prompts:
//	    ask: questions_and_errors   # always | never | questions_and_errors
//	    timeout: 30m          # then continue (error_recovery never does)
//	    stop_status: review   # the task's status after `stop`: review | blocked
//	  budget:                 # resource_warning at 80 % of any of these
//	    max_turns: 20
//	    max_duration: 2h
//	    max_tokens: 2000000   # input + output, as the CLI reports them
//	  checkpoint_before_edit: false
//	  retention_days: 30
type Config struct {
	Watchdog struct {
		Threshold      Duration `yaml:"threshold"`
		EscalationWait Duration `yaml:"escalation_wait"`
		MaxRetries     int      `yaml:"max_retries"`
		Nudge          string   `yaml:"nudge"`
	} `yaml:"watchdog"`
	Prompts struct {
		Ask        string   `yaml:"ask"`
		Timeout    Duration `yaml:"timeout"`
		StopStatus string   `yaml:"stop_status"`
		Continue   string   `yaml:"continue"`
	} `yaml:"prompts"`
	Budget struct {
		MaxTurns    int      `yaml:"max_turns"`
		MaxDuration Duration `yaml:"max_duration"`
		// MaxTokens counts input and output tokens as the CLI reports
		// them at the end of each turn.
		MaxTokens int64 `yaml:"max_tokens"`
	} `yaml:"budget"`
	CheckpointBeforeEdit bool `yaml:"checkpoint_before_edit"`
	RetentionDays        int  `yaml:"retention_days"`
}

// Defaults.
const (
	DefaultPromptTimeout = 30 * time.Minute
	DefaultRetentionDays = 30
	DefaultContinue      = "Continue with the task."
	// WarnAt is the share of a budget that raises a resource_warning.
	WarnAt = 0.8
)

// Duration is a time.Duration written as "5m", "90s" in YAML.
type Duration time.Duration

// UnmarshalYAML reads "5m" (or a number of seconds).
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return err
	}
	if v, err := time.ParseDuration(s); err == nil {
		*d = Duration(v)
		return nil
	}
	var secs int
	if err := n.Decode(&secs); err == nil {
		*d = Duration(time.Duration(secs) * time.Second)
		return nil
	}
	return fmt.Errorf("line %d: %q is not a duration (write 90s, 5m, 2h)", n.Line, s)
}

// WatchdogConfig is the watchdog's part.
func (c Config) WatchdogConfig() watchdog.Config {
	return watchdog.Config{Threshold: time.Duration(c.Watchdog.Threshold), EscalationWait: time.Duration(c.Watchdog.EscalationWait),
		MaxRetries: c.Watchdog.MaxRetries, Nudge: c.Watchdog.Nudge}
}

func (c Config) withDefaults() Config {
	if c.Prompts.Ask == "" {
		c.Prompts.Ask = AskQuestionsAndErrors
	}
	if c.Prompts.Timeout == 0 {
		c.Prompts.Timeout = Duration(DefaultPromptTimeout)
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

// Check refuses values that mean nothing.
func (c Config) Check() error {
	switch c.Prompts.Ask {
	case "", AskAlways, AskNever, AskQuestionsAndErrors:
	default:
		return fmt.Errorf("supervision.prompts.ask is %q: use always, never or questions_and_errors", c.Prompts.Ask)
	}
	switch c.Prompts.StopStatus {
	case "", "review", "blocked":
	default:
		return fmt.Errorf("supervision.prompts.stop_status is %q: use review or blocked", c.Prompts.StopStatus)
	}
	if c.Budget.MaxTurns < 0 || c.Budget.MaxDuration < 0 || c.Budget.MaxTokens < 0 {
		return fmt.Errorf("supervision.budget: a negative budget means nothing: leave it out for none")
	}
	if c.RetentionDays < 0 {
		return fmt.Errorf("supervision.retention_days is %d: use a number of days (0 = the default, 30)", c.RetentionDays)
	}
	return nil
}

// LoadConfig reads the keep-moving settings of the workspace (defaults
// when the file or the section is missing).
func LoadConfig(ws *workspace.Workspace) (Config, error) {
	var f struct {
		Supervision Config `yaml:"supervision"`
	}
	b, err := ws.ReadFileMax(ws.ConfigPath(), regularfile.MaxConfigBytes) // as ws.Config reads it
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Config{}, err
	}
	if len(b) > 0 {
		if err := yaml.Unmarshal(b, &f); err != nil {
			return Config{}, fmt.Errorf("%s: supervision: %v", ws.ConfigPath(), err)
		}
	}
	if err := f.Supervision.Check(); err != nil {
		return Config{}, fmt.Errorf("%s: %w", ws.ConfigPath(), err)
	}
	return f.Supervision.withDefaults(), nil
}

// Retention is how long ended sessions are kept.
func (c Config) Retention() time.Duration {
	return time.Duration(c.withDefaults().RetentionDays) * 24 * time.Hour
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
