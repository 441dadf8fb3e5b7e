// Package policy decides which of an agent's actions need a person: the
// workspace's policy file (.agent/policy.yaml) auto-approves commands
// (globs), tools, and file patterns for reading and writing, up to a risk
// threshold; the user's own allowlist (allowlist.yaml in the user's config
// folder, e.g. ~/.config/agentinfra/) bounds it, so a workspace policy — a
// file anyone who can push to the repository can change — cannot
// auto-approve a command the user never listed. Risk rules (Assess) grade
// every action low, high or critical. A policy that does not parse means
// "ask for everything", with a warning naming the line. Live reloads both
// files when they change (fsnotify). The same rules are translated into
// each CLI's own permission settings (native.go) so that only what needs a
// person reaches the bridge. The file also holds the command registry
// (named commands operators may run remotely) and per-kind timeouts.
package policy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/contain"
)

// FileName is the workspace policy's name inside .agent/.
const FileName = "policy.yaml"

// AllowlistName is the user allowlist's name inside the user's config folder.
const AllowlistName = "allowlist.yaml"

// DefaultApprovalTimeout is how long an approval request waits by default.
const DefaultApprovalTimeout = time.Hour

// Risk levels, in order.
const (
	RiskLow      = "low"
	RiskHigh     = "high"
	RiskCritical = "critical"
)

var riskOrder = []string{RiskLow, RiskHigh, RiskCritical}

// RiskAtMost reports whether risk a is at or below b.
func RiskAtMost(a, b string) bool { return slices.Index(riskOrder, a) <= slices.Index(riskOrder, b) }

// File is the workspace policy file as written:
//
//	auto_approve:
//	  commands: ["git status", "go test *"]   # globs over the whole command line
//	  tools: [Read, Grep, Glob]               # tool names (any CLI's)
//	  read: ["**"]                            # workspace-relative file patterns
//	  write: ["docs/**", "*.md"]
//	  max_risk: low                           # nothing above it is auto-approved
//	timeouts:
//	  approval: 1h                            # or never
//	commands:                                 # the registry: run remotely by name
//	  status: git status
type File struct {
	AutoApprove AutoApprove       `yaml:"auto_approve"`
	Timeouts    map[string]string `yaml:"timeouts"`
	Commands    map[string]string `yaml:"commands"`
}

// AutoApprove is what runs without asking.
type AutoApprove struct {
	Commands []string `yaml:"commands"`
	Tools    []string `yaml:"tools"`
	Read     []string `yaml:"read"`
	Write    []string `yaml:"write"`
	MaxRisk  string   `yaml:"max_risk"`
}

// Allowlist is the user's own bound on commands.
type Allowlist struct {
	Commands []string `yaml:"commands"`
	// Supervision says what environment agents get (contain.EnvRules:
	// env: allowlist passes only pass_env and what each CLI needs); read
	// by contain.ChildEnv wherever agentinfra starts an agent.
	Supervision contain.EnvRules `yaml:"supervision"`
}

// Policy is the effective policy of a workspace.
type Policy struct {
	Root      string // the workspace root
	File      File
	Allowlist Allowlist
	// AskAll is set when the workspace policy could not be read: every
	// action asks a person.
	AskAll bool
	// Warnings say what was wrong (a file that does not parse, with its line).
	Warnings []string
	// Registry is the named commands.
	Registry Registry
	timeouts map[string]time.Duration // kind → timeout; 0 = never
}

// Paths names the two files of a workspace's policy.
type Paths struct {
	Workspace string // .agent/policy.yaml
	Allowlist string // <user config>/agentinfra/allowlist.yaml ("" = none)
}

// DefaultPaths are the files of the workspace at root: the allowlist is in
// $AGENTINFRA_CONFIG_DIR, else $XDG_CONFIG_HOME/agentinfra, else
// ~/.config/agentinfra. getenv is the caller's environment (nil: none, so
// no allowlist).
func DefaultPaths(root string, getenv func(string) string) Paths {
	p := Paths{Workspace: filepath.Join(root, ".agent", FileName)}
	if getenv == nil {
		return p
	}
	dir := getenv("AGENTINFRA_CONFIG_DIR")
	switch {
	case dir != "":
	case filepath.IsAbs(getenv("XDG_CONFIG_HOME")):
		dir = filepath.Join(getenv("XDG_CONFIG_HOME"), "agentinfra")
	case getenv("HOME") != "":
		dir = filepath.Join(getenv("HOME"), ".config", "agentinfra")
	}
	if dir != "" {
		p.Allowlist = filepath.Join(dir, AllowlistName)
	}
	return p
}

// Load reads the policy of the workspace at root. It never fails: a file
// that is missing is an empty policy (everything asks), a file that does not
// parse makes the policy AskAll with a warning.
func Load(root string, paths Paths) *Policy {
	p := &Policy{Root: root}
	if b, err := os.ReadFile(paths.Workspace); err == nil {
		f, perr := Parse(paths.Workspace, b)
		if perr != nil {
			p.AskAll = true
			p.Warnings = append(p.Warnings, perr.Error()+"; every action asks a person until it is fixed")
		} else {
			p.File = f
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		p.AskAll = true
		p.Warnings = append(p.Warnings, fmt.Sprintf("read %s: %v; every action asks a person", paths.Workspace, err))
	}
	if paths.Allowlist != "" {
		if b, err := os.ReadFile(paths.Allowlist); err == nil {
			var a Allowlist
			if err := decodeStrict(b, &a); err != nil {
				p.Warnings = append(p.Warnings, fmt.Sprintf("%s: %v; no command is auto-approved", paths.Allowlist, err))
			} else {
				p.Allowlist = a
			}
		}
	}
	if !p.AskAll {
		var err error
		if p.timeouts, err = parseTimeouts(p.File.Timeouts); err != nil {
			p.Warnings = append(p.Warnings, fmt.Sprintf("%s: %v; default timeouts apply", paths.Workspace, err))
		}
		p.Registry, err = newRegistry(p.File.Commands)
		if err != nil {
			p.Warnings = append(p.Warnings, fmt.Sprintf("%s: %v", paths.Workspace, err))
		}
	}
	return p
}

// Parse reads a workspace policy file; the error names the file and line.
func Parse(name string, src []byte) (File, error) {
	var f File
	if err := decodeStrict(src, &f); err != nil {
		return File{}, &agenterr.Error{Kind: agenterr.Invalid, File: name, Field: "config", Reason: err.Error()}
	}
	if f.AutoApprove.MaxRisk == "" {
		f.AutoApprove.MaxRisk = RiskLow
	}
	if !slices.Contains(riskOrder, f.AutoApprove.MaxRisk) {
		return File{}, &agenterr.Error{Kind: agenterr.Invalid, File: name, Line: lineOf(src, "max_risk"), Field: "auto_approve.max_risk",
			Value: f.AutoApprove.MaxRisk, Valid: riskOrder, Reason: fmt.Sprintf("%q: use low, high or critical", f.AutoApprove.MaxRisk)}
	}
	return f, nil
}

// decodeStrict decodes YAML refusing unknown keys (yaml.v3 names the line).
func decodeStrict(src []byte, v any) error {
	dec := yaml.NewDecoder(bytes.NewReader(src))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil && !errors.Is(err, errEOF) {
		return errors.New(strings.TrimPrefix(err.Error(), "yaml: "))
	}
	return nil
}

var errEOF = io.EOF

func lineOf(src []byte, key string) int {
	for i, l := range strings.Split(string(src), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), key+":") {
			return i + 1
		}
	}
	return 0
}

func parseTimeouts(m map[string]string) (map[string]time.Duration, error) {
	out := map[string]time.Duration{}
	for k, v := range m {
		if strings.EqualFold(strings.TrimSpace(v), "never") {
			out[k] = 0
			continue
		}
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("timeouts.%s: %q is not a duration (e.g. 30m, 1h) or never", k, v)
		}
		out[k] = d
	}
	return out, nil
}

// Timeout is the timeout of a kind of request ("approval", …); 0 = never.
func (p *Policy) Timeout(kind string) time.Duration {
	if d, ok := p.timeouts[kind]; ok {
		return d
	}
	if kind == "approval" {
		return DefaultApprovalTimeout
	}
	return 0
}
