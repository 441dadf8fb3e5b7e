package config

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/agentinfra/agentinfra/agenterr"
)

// Review is the review section (package review):
//
//	review:
//	  strategy: squash              # how approve lands a change: squash | merge | rebase
//	  checks:                       # run in the agent's worktree before landing
//	    - go test ./...
//	    - agentinfra validate
//	  check_timeout: 10m            # bound of each check
//	  reviewer: rita                # a fleet agent that reviews each change in REVIEW
//	  auto_land: false              # land on the reviewer's approve, checks green
//
// Values are as written ("", nil and 0 when not set); package review fills
// the defaults and splits the checks into argv (no shell runs them).
type Review struct {
	Strategy     string
	Checks       []string
	CheckTimeout time.Duration
	// Reviewer is the fleet agent started on each change that reaches
	// REVIEW ("" = none).
	Reviewer string
	// AutoLand lands a change the reviewer approved whose checks passed.
	AutoLand bool
}

// ReviewStrategies are the values review.strategy takes.
var ReviewStrategies = []string{"squash", "merge", "rebase"}

// Review is the review section.
func (c *Config) Review() (Review, error) { return c.review, c.sections["review"] }

var reviewKeys = []string{"strategy", "checks", "check_timeout", "reviewer", "auto_land"}

func (d decoder) reviewSection(n *yaml.Node) (Review, error) {
	var r Review
	err := d.mapping(n, "review", reviewKeys, func(key string, _, v *yaml.Node) error {
		switch key {
		case "strategy":
			w, err := d.word(v, "review.strategy", "squash")
			if err != nil {
				return err
			}
			if !slices.Contains(ReviewStrategies, w) {
				e := d.badValue(v, "review.strategy", "use squash, merge or rebase").(*agenterr.Error)
				e.Valid = ReviewStrategies
				return e
			}
			r.Strategy = w
		case "checks":
			if v.Kind != yaml.SequenceNode {
				return d.bad(v, "review.checks", `must be a list of commands, e.g. ["go test ./...", "agentinfra validate"]`)
			}
			for _, c := range v.Content {
				w, err := d.word(c, "review.checks", "go test ./...")
				if err != nil {
					return err
				}
				if w == "" {
					return d.bad(c, "review.checks", "a check is a command, e.g. go test ./...")
				}
				r.Checks = append(r.Checks, w)
			}
		case "check_timeout":
			w, err := d.word(v, "review.check_timeout", "10m")
			if err != nil {
				return err
			}
			t, err := time.ParseDuration(w)
			if err != nil || t <= 0 {
				return d.badValue(v, "review.check_timeout", "use a duration such as 10m")
			}
			r.CheckTimeout = t
		case "reviewer":
			w, err := d.word(v, "review.reviewer", "rita")
			if err != nil {
				return err
			}
			r.Reviewer = strings.TrimPrefix(w, "@")
		case "auto_land":
			w, err := d.word(v, "review.auto_land", "true")
			if err != nil {
				return err
			}
			b, err := strconv.ParseBool(w)
			if err != nil {
				return d.badValue(v, "review.auto_land", "use true or false")
			}
			r.AutoLand = b
		}
		return nil
	})
	return r, err
}
