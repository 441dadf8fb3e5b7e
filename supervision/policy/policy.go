// Package policy decides which of an agent's actions need a person: the
// workspace's policy file (.agent/policy.yaml) auto-approves commands
// (globs in shell words), tools, and file patterns for reading and writing,
// up to a risk threshold; the user's own allowlist (allowlist.yaml in the
// user's config folder, e.g. ~/.config/agentinfra/) bounds every kind of
// rule and the threshold, so a workspace policy — a file anyone who can push
// to the repository can change — can only narrow what the user allows.
// Risk rules (Assess) grade every action low, high or critical: a command by
// what it can run (the command table, commands.go), a path by where it
// leads once its symlinks are followed (Place, paths.go: outside the
// worktree, in a git directory or one of agentinfra's control files is
// critical and never auto-approved). A policy that does not parse means
// "ask for everything", with a warning naming the line. Live reloads both
// files when they change (fsnotify). No CLI is given these rules as its
// own: every CLI asks agentinfra for every tool call, and its bridge
// applies them (package bridge). The file also holds the command registry
// (named commands operators may run remotely) and per-kind timeouts.
package policy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/contain"
	"github.com/agentinfra/agentinfra/internal/regularfile"
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
//	  commands: ["git status", "go test *"]   # globs in shell words (commandGlob)
//	  tools: [Read, Grep, Glob]               # tool names (any CLI's)
//	  read: ["**"]                            # worktree-relative patterns of where a path leads
//	  write: ["docs/**", "*.md"]
//	  max_risk: low                           # nothing above it (nor above the allowlist's) is auto-approved
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

// Allowlist is the user's own bound on every workspace's policy: a
// workspace auto-approves an action only when its own rule and the
// allowlist's rule of the same kind both match, and only up to the lower of
// the two max_risk (the allowlist's is low unless it says otherwise). No
// allowlist, or a key it does not have, auto-approves nothing of that kind.
//
//	commands: ["git status", "go test *"]   # command globs
//	tools: [Grep, Glob]                      # tool names
//	read: ["**"]                             # file patterns (resolved, worktree-relative)
//	write: ["docs/**", "*.md"]
//	max_risk: low                            # low (default) or high
type Allowlist struct {
	Commands []string `yaml:"commands"`
	Tools    []string `yaml:"tools"`
	Read     []string `yaml:"read"`
	Write    []string `yaml:"write"`
	MaxRisk  string   `yaml:"max_risk"`
	// Supervision says what environment agents get (contain.EnvRules:
	// env: allowlist passes only pass_env and what each CLI needs); read
	// by contain.ChildEnv wherever agentinfra starts an agent.
	Supervision contain.EnvRules `yaml:"supervision"`
}

// MaxFileSize is the largest policy or allowlist file read (the cap of
// every configuration file a person writes): a policy
// longer than this is not one a person wrote (and a symlink to /dev/zero
// must not exhaust memory).
const MaxFileSize = regularfile.MaxConfigBytes

// Policy is the effective policy of a workspace.
type Policy struct {
	Root      string // the worktree the agent works in: paths are judged relative to it
	Paths     Paths  // the files it was read from
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

// Paths names the two files of a workspace's policy, and where the
// person's own files are (which no agent may touch: control files).
type Paths struct {
	Workspace string // .agent/policy.yaml
	Allowlist string // <user config>/agentinfra/allowlist.yaml ("" = none)
	// UserConfig is the person's agentinfra folder of tokens
	// ($XDG_CONFIG_HOME/agentinfra, else ~/.config/agentinfra; "" = unknown).
	UserConfig string
	// Home is $HOME, for the paths an agent names with ~ ("" = unknown).
	Home string
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
	if h := getenv("HOME"); filepath.IsAbs(h) {
		p.Home = h
		p.UserConfig = filepath.Join(h, ".config", "agentinfra")
	}
	if x := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		p.UserConfig = filepath.Join(x, "agentinfra")
	}
	dir := getenv("AGENTINFRA_CONFIG_DIR")
	if dir == "" {
		dir = p.UserConfig
	}
	if dir != "" {
		p.Allowlist = filepath.Join(dir, AllowlistName)
	}
	return p
}

// Load reads the policy of the workspace at root. It never fails: a file
// that is missing is an empty policy (everything asks), a file that does not
// parse, is not a regular file or is larger than MaxFileSize makes the
// policy AskAll with a warning. An allowlist that cannot be read or does
// not parse is none (nothing is auto-approved), with a warning.
func Load(root string, paths Paths) *Policy {
	p := &Policy{Root: root, Paths: paths}
	if b, err := readPolicyFile(paths.Workspace); err == nil {
		f, perr := Parse(displayPath(root, paths.Workspace), b)
		if perr != nil {
			p.AskAll = true
			p.Warnings = append(p.Warnings, perr.Error()+"; "+AskAllWarning)
		} else {
			p.File = f
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		p.AskAll = true
		p.Warnings = append(p.Warnings, fmt.Sprintf("%s: %v; %s", displayPath(root, paths.Workspace), err, AskAllWarning))
	}
	if paths.Allowlist != "" {
		b, err := readPolicyFile(paths.Allowlist)
		switch {
		case err == nil:
			a, perr := parseAllowlist(b)
			if perr != nil {
				p.Warnings = append(p.Warnings, fmt.Sprintf("%s: %v; nothing is auto-approved", paths.Allowlist, perr))
			} else {
				p.Allowlist = a
			}
		case !errors.Is(err, fs.ErrNotExist):
			p.Warnings = append(p.Warnings, fmt.Sprintf("read %s: %v; nothing is auto-approved", paths.Allowlist, err))
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
		for _, g := range p.File.AutoApprove.Commands {
			if _, err := compileGlob(g); err != nil {
				p.Warnings = append(p.Warnings, fmt.Sprintf("%s: auto_approve.commands %q %v; it matches nothing", paths.Workspace, g, err))
			}
		}
	}
	for _, g := range p.Allowlist.Commands {
		if _, err := compileGlob(g); err != nil {
			p.Warnings = append(p.Warnings, fmt.Sprintf("%s: commands %q %v; it matches nothing", paths.Allowlist, g, err))
		}
	}
	return p
}

// readPolicyFile reads a policy or allowlist file: a regular file (a
// symlink to one is followed) of at most MaxFileSize bytes.
func readPolicyFile(path string) ([]byte, error) {
	b, err := regularfile.Read(path, MaxFileSize)
	switch {
	case errors.Is(err, regularfile.ErrNotRegular):
		return nil, fmt.Errorf("%w: a policy is a regular file (replace it with one)", err)
	case errors.Is(err, regularfile.ErrTooLarge):
		return nil, fmt.Errorf("%w (a policy file holds at most %d bytes)", err, MaxFileSize)
	}
	return b, err
}

func parseAllowlist(src []byte) (Allowlist, error) {
	var a Allowlist
	if err := decodeStrict(src, &a); err != nil {
		return Allowlist{}, err
	}
	if a.MaxRisk == "" {
		a.MaxRisk = RiskLow
	}
	if !slices.Contains(riskOrder, a.MaxRisk) {
		return Allowlist{}, fmt.Errorf("max_risk %q: use low or high", a.MaxRisk)
	}
	return a, nil
}

// AskAllWarning ends the warning of a workspace policy that cannot be read.
const AskAllWarning = "every action will be asked until it is fixed"

// displayPath is path as a person finds it: relative to the workspace
// root when it is inside.
func displayPath(root, path string) string {
	if rel, err := filepath.Rel(root, path); err == nil && root != "" && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}

// Parse reads a workspace policy file; the error names the file, line and
// column: FILE:LINE:COL: message (FileError's).
func Parse(name string, src []byte) (File, error) {
	var f File
	if err := decodeStrict(src, &f); err != nil {
		fe := yamlError(name, src, err.Error())
		return File{}, &agenterr.Error{Kind: agenterr.Invalid, Field: "config", Reason: fe.Error()}
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
