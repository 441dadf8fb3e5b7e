// Package config decodes the workspace config file, .agent/config.yaml —
// every section — in one place, and hands typed values to the services:
//
//	matrix:    the vocabulary of the matrix (statuses, priorities,
//	           difficulties, aliases, canonicalize) → *matrix.Vocabulary
//	models:    the model tiers and per-mode choices        → Models (package prompt)
//	fleet:     the fleet's defaults                        → Fleet (package fleet)
//	projects:  the projects agents work in                 → []Project (package fleet)
//	coder:     the Coder backend                           → Coder (package fleet/coder)
//	supervision: supervised sessions and keeping them moving → Supervision
//	           (packages supervision, supervision/keepmoving)
//	slack:     the Slack app                               → Slack (package slack)
//	review:    how a finished task's change lands          → Review (package review)
//	console:   the console's address as people reach it    → Console (package slack)
//
// and the one environment variable that tunes a service, the matrix lock's
// timeout ($AGENTINFRA_LOCK_TIMEOUT), read through the caller's getenv.
//
// A process decodes the file once: a workspace.Workspace holds its Config
// (Workspace.Config), so every service handed the same workspace reads the
// same values and none opens the file again. Loads counts the reads, for the
// tests that prove it.
//
// A file that is not YAML fails every section. A section that is wrong
// (an unknown key, a list where a word belongs, a duration that is none)
// fails only the services that read it: its accessor returns the error, an
// *agenterr.Error of kind Invalid naming the file, the line and the key,
// which also matches ErrConfig. Sections that are missing are their
// defaults; keys at the top level that agentinfra does not know are left to
// other tools.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/internal/regularfile"
	"github.com/agentinfra/agentinfra/matrix"
)

// Rel is the config file's path inside the workspace root, as messages name it.
const Rel = ".agent/config.yaml"

// EnvLockTimeout names the environment variable that sets how long a writer
// waits for the matrix lock, as a Go duration ("30s"); the default is
// matrix.DefaultLockTimeout.
const EnvLockTimeout = "AGENTINFRA_LOCK_TIMEOUT"

// ErrConfig is matched (errors.Is) by every error about the config file.
var ErrConfig = agenterr.New(agenterr.Invalid, "bad workspace config")

// Config is the decoded config file of one workspace.
type Config struct {
	// Path is the file's absolute path; Exists says whether it was there.
	Path   string
	Exists bool
	// LockTimeout is $AGENTINFRA_LOCK_TIMEOUT, 0 when unset or not a
	// positive duration (the store's default applies).
	LockTimeout time.Duration

	vocab       *matrix.Vocabulary
	models      Models
	fleet       Fleet
	coder       Coder
	supervision Supervision
	slack       Slack
	review      Review
	console     Console
	sections    map[string]error // a section's error, by section name
}

// Vocabulary is the matrix section: the workspace's statuses, priorities,
// difficulties and aliases (matrix.DefaultVocabulary when there is none).
func (c *Config) Vocabulary() (*matrix.Vocabulary, error) {
	return c.vocab, c.sections["matrix"]
}

// Models is the models section.
func (c *Config) Models() (Models, error) { return c.models, c.sections["models"] }

// Fleet is the fleet and projects sections.
func (c *Config) Fleet() (Fleet, error) {
	if err := c.sections["fleet"]; err != nil {
		return Fleet{}, err
	}
	return c.fleet, c.sections["projects"]
}

// Coder is the coder section.
func (c *Config) Coder() (Coder, error) { return c.coder, c.sections["coder"] }

// Supervision is the supervision section.
func (c *Config) Supervision() (Supervision, error) {
	return c.supervision, c.sections["supervision"]
}

// Slack is the slack section.
func (c *Config) Slack() (Slack, error) { return c.slack, c.sections["slack"] }

// loads counts the config files read by this process.
var loads atomic.Int64

// Loads reports how many config files this process has read: each Load of
// an existing file is one (tests compare it before and after an operation).
func Loads() int64 { return loads.Load() }

// Load reads and decodes root's .agent/config.yaml. getenv reads the
// environment (nil: none) for $AGENTINFRA_LOCK_TIMEOUT and the HOME of a
// `~/` path; read reads the file (nil: a regular file of at most
// regularfile.MaxConfigBytes; the workspace passes its ReadFileMax, which
// also refuses a link out of it). A missing file is the defaults; an unreadable file or one that is
// not YAML is an error.
func Load(root string, getenv func(string) string, read func(string) ([]byte, error)) (*Config, error) {
	if read == nil {
		read = func(p string) ([]byte, error) { return regularfile.Read(p, regularfile.MaxConfigBytes) }
	}
	path := filepath.Join(root, filepath.FromSlash(Rel))
	src, err := read(path)
	if errors.Is(err, fs.ErrNotExist) {
		src, err = nil, nil
	} else if err == nil {
		loads.Add(1)
	}
	if err != nil {
		return nil, fmt.Errorf("read workspace config: %w", err)
	}
	c, err := Parse(Rel, src, root, getenv)
	if err != nil {
		return nil, err
	}
	c.Path, c.Exists = path, src != nil
	return c, nil
}

// Parse decodes a config file's bytes; name is the file as messages name
// it, root the workspace root that relative paths in it start from.
func Parse(name string, src []byte, root string, getenv func(string) string) (*Config, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	c := &Config{vocab: matrix.DefaultVocabulary(), sections: map[string]error{}}
	if d, err := time.ParseDuration(getenv(EnvLockTimeout)); err == nil && d > 0 {
		c.LockTimeout = d
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		// Field "config": the fleet's contract names the file itself as the input at fault.
		return nil, &agenterr.Error{Kind: agenterr.Invalid, File: name, Field: "config", Reason: err.Error(), Err: ErrConfig}
	}
	if len(doc.Content) == 0 {
		return c, nil
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return nil, &agenterr.Error{Kind: agenterr.Invalid, File: name, Line: top.Line, Col: top.Column,
			Reason: "the file must be a mapping of sections (matrix, models, fleet, projects, coder, supervision, slack, review, console)", Err: ErrConfig}
	}
	d := decoder{file: name}
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		if isNull(v) {
			continue // an empty section: its defaults
		}
		var err error
		switch k.Value {
		case "matrix":
			c.vocab, err = d.vocabulary(v)
		case "models":
			c.models, err = d.models(v)
		case "fleet":
			c.fleet, err = d.fleet(v)
		case "projects":
			c.fleet.Projects, err = d.projects(v, root)
		case "coder":
			c.coder, err = d.coder(v, root, getenv)
		case "supervision":
			c.supervision, err = d.supervisionSection(v)
		case "slack":
			c.slack, err = d.slack(v)
		case "review":
			c.review, err = d.reviewSection(v)
		case "console":
			c.console, err = d.consoleSection(v)
		default:
			continue
		}
		if err != nil {
			c.sections[k.Value] = err
		}
	}
	if c.vocab == nil {
		c.vocab = matrix.DefaultVocabulary()
	}
	return c, nil
}

// decoder turns yaml nodes into typed values, with errors naming the file,
// the line and the key.
type decoder struct{ file string }

func (d decoder) bad(n *yaml.Node, key, format string, a ...any) error {
	return &agenterr.Error{Kind: agenterr.Invalid, File: d.file, Line: n.Line, Col: n.Column, Field: key, Reason: fmt.Sprintf(format, a...), Err: ErrConfig}
}

func (d decoder) badValue(n *yaml.Node, key, format string, a ...any) error {
	e := d.bad(n, key, format, a...).(*agenterr.Error)
	e.Value = n.Value
	return e
}

// mapping walks a mapping section, refusing keys not in known.
func (d decoder) mapping(n *yaml.Node, section string, known []string, each func(key string, k, v *yaml.Node) error) error {
	if n.Kind != yaml.MappingNode {
		return d.bad(n, section, "must be a mapping with %s", list(known))
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !slices.Contains(known, k.Value) {
			return d.bad(k, section+"."+k.Value, "unknown key; the %s section takes %s", section, list(known))
		}
		if err := each(k.Value, k, v); err != nil {
			return err
		}
	}
	return nil
}

// word is a scalar value (a name, a path, a command).
func (d decoder) word(n *yaml.Node, key, example string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", d.bad(n, key, "must be a single value, e.g. %s", example)
	}
	return strings.TrimSpace(n.Value), nil
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

func list(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// count is a whole number, least or more.
func (d decoder) count(n *yaml.Node, key string, least int, example string) (int, error) {
	var i int
	if n.Kind != yaml.ScalarNode || n.Decode(&i) != nil || i < least {
		return 0, d.badValue(n, key, "must be a whole number, %d or more, e.g. %s", least, example)
	}
	return i, nil
}

// duration is a Go duration (90s, 5m, 2h) or a whole number of seconds,
// more than zero.
func (d decoder) duration(n *yaml.Node, key, example string) (time.Duration, error) {
	if n.Kind == yaml.ScalarNode {
		if t, err := time.ParseDuration(n.Value); err == nil && t > 0 {
			return t, nil
		}
		if secs, err := strconv.Atoi(n.Value); err == nil && secs > 0 {
			return time.Duration(secs) * time.Second, nil
		}
	}
	return 0, d.badValue(n, key, "use a duration such as %s", example)
}

// oneOf is a word of a closed set.
func (d decoder) oneOf(n *yaml.Node, key string, valid ...string) (string, error) {
	w, err := d.word(n, key, valid[0])
	if err != nil {
		return "", err
	}
	if !slices.Contains(valid, w) {
		e := d.badValue(n, key, "use %s", orList(valid)).(*agenterr.Error)
		e.Valid = valid
		return "", e
	}
	return w, nil
}

func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
