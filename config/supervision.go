package config

import (
	"time"

	"go.yaml.in/yaml/v3"
)

// Supervision is the supervision section, the one type of it (package
// supervision reads the sessions' part, supervision/keepmoving the rest):
//
//	supervision:
//	  max_concurrent_sessions: 3   # active or paused at once
//	  operators: ["@ana", "bo"]    # may decide any session's requests
//	  mode: local                  # local | remote | hybrid (new sessions)
//	  watchdog:
//	    threshold: 5m              # silence before a stall alert
//	    escalation_wait: 2m        # between nudges, and before escalating
//	    max_retries: 3             # nudges before escalating
//	    nudge: "…"                 # the message sent
//	  prompts:
//	    ask: questions_and_errors  # always | never | questions_and_errors
//	    timeout: 30m               # then continue (error_recovery never does)
//	    stop_status: review        # the task's status after `stop`: review | blocked
//	    continue: "…"              # the message a `continue` answer sends
//	  budget:                      # resource_warning at 80 % of any of these
//	    max_turns: 20
//	    max_duration: 2h
//	    max_tokens: 2000000        # input + output, as the CLI reports them
//	  checkpoint_before_edit: false
//	  retention_days: 30
//
// Values are as written (0 and "" when not set); packages supervision and
// supervision/keepmoving fill the defaults. Durations are written as Go
// durations (90s, 5m, 2h) or a whole number of seconds.
type Supervision struct {
	MaxConcurrentSessions int
	Operators             []string
	Mode                  string

	Watchdog             Watchdog
	Prompts              Prompts
	Budget               Budget
	CheckpointBeforeEdit bool
	RetentionDays        int
}

// Watchdog is supervision.watchdog: when a silent agent is nudged and then
// escalated.
type Watchdog struct {
	Threshold      time.Duration
	EscalationWait time.Duration
	MaxRetries     int
	Nudge          string
}

// Prompts is supervision.prompts: when a turn's end asks the operator.
type Prompts struct {
	Ask        string
	Timeout    time.Duration
	StopStatus string
	Continue   string
}

// Budget is supervision.budget: a resource_warning at 80 % of any bound
// (0 = none). MaxTokens counts input and output tokens as the CLI reports
// them at the end of each turn.
type Budget struct {
	MaxTurns    int
	MaxDuration time.Duration
	MaxTokens   int64
}

// When a turn's end asks the operator (supervision.prompts.ask).
const (
	AskAlways             = "always"               // every turn end that is not a clear finish
	AskNever              = "never"                // a turn end ends the run
	AskQuestionsAndErrors = "questions_and_errors" // only clarification and error_recovery
)

var (
	supervisionKeys = []string{"max_concurrent_sessions", "operators", "mode",
		"watchdog", "prompts", "budget", "checkpoint_before_edit", "retention_days"}
	watchdogKeys = []string{"threshold", "escalation_wait", "max_retries", "nudge"}
	promptsKeys  = []string{"ask", "timeout", "stop_status", "continue"}
	budgetKeys   = []string{"max_turns", "max_duration", "max_tokens"}
)

func (d decoder) supervisionSection(n *yaml.Node) (Supervision, error) {
	var s Supervision
	err := d.mapping(n, "supervision", supervisionKeys, func(key string, _, v *yaml.Node) error {
		var err error
		switch key {
		case "max_concurrent_sessions":
			s.MaxConcurrentSessions, err = d.count(v, "supervision.max_concurrent_sessions", 1, "3")
		case "operators":
			if v.Kind != yaml.SequenceNode {
				return d.bad(v, "supervision.operators", `must be a list of people, e.g. ["@ana", "bo"]`)
			}
			for _, o := range v.Content {
				w, err := d.word(o, "supervision.operators", "@ana")
				if err != nil {
					return err
				}
				s.Operators = append(s.Operators, w)
			}
		case "mode":
			s.Mode, err = d.word(v, "supervision.mode", "local")
		case "watchdog":
			s.Watchdog, err = d.watchdog(v)
		case "prompts":
			s.Prompts, err = d.prompts(v)
		case "budget":
			s.Budget, err = d.budget(v)
		case "checkpoint_before_edit":
			if err = v.Decode(&s.CheckpointBeforeEdit); err != nil || v.Kind != yaml.ScalarNode {
				return d.badValue(v, "supervision.checkpoint_before_edit", "must be true or false")
			}
		case "retention_days":
			// 0: the default.
			s.RetentionDays, err = d.count(v, "supervision.retention_days", 0, "30")
		}
		return err
	})
	return s, err
}

func (d decoder) watchdog(n *yaml.Node) (Watchdog, error) {
	var w Watchdog
	err := d.mapping(n, "supervision.watchdog", watchdogKeys, func(key string, _, v *yaml.Node) error {
		var err error
		switch key {
		case "threshold":
			w.Threshold, err = d.duration(v, "supervision.watchdog.threshold", "5m")
		case "escalation_wait":
			w.EscalationWait, err = d.duration(v, "supervision.watchdog.escalation_wait", "2m")
		case "max_retries":
			// -1: escalate without nudging (package watchdog).
			w.MaxRetries, err = d.count(v, "supervision.watchdog.max_retries", -1, "3")
		case "nudge":
			w.Nudge, err = d.word(v, "supervision.watchdog.nudge", `"Are you still working?"`)
		}
		return err
	})
	return w, err
}

func (d decoder) prompts(n *yaml.Node) (Prompts, error) {
	var p Prompts
	err := d.mapping(n, "supervision.prompts", promptsKeys, func(key string, _, v *yaml.Node) error {
		var err error
		switch key {
		case "ask":
			p.Ask, err = d.oneOf(v, "supervision.prompts.ask", AskAlways, AskNever, AskQuestionsAndErrors)
		case "timeout":
			p.Timeout, err = d.duration(v, "supervision.prompts.timeout", "30m")
		case "stop_status":
			p.StopStatus, err = d.oneOf(v, "supervision.prompts.stop_status", "review", "blocked")
		case "continue":
			p.Continue, err = d.word(v, "supervision.prompts.continue", `"Continue with the task."`)
		}
		return err
	})
	return p, err
}

func (d decoder) budget(n *yaml.Node) (Budget, error) {
	var b Budget // 0: no bound
	err := d.mapping(n, "supervision.budget", budgetKeys, func(key string, _, v *yaml.Node) error {
		var err error
		switch key {
		case "max_turns":
			b.MaxTurns, err = d.count(v, "supervision.budget.max_turns", 0, "20")
		case "max_duration":
			b.MaxDuration, err = d.duration(v, "supervision.budget.max_duration", "2h")
		case "max_tokens":
			var t int
			t, err = d.count(v, "supervision.budget.max_tokens", 0, "2000000")
			b.MaxTokens = int64(t)
		}
		return err
	})
	return b, err
}
