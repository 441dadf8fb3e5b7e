package metadata

import (
	"os"
	"path/filepath"
	"time"
)

// Schema describes a field, from its task in the Taskfile.
type Schema struct {
	// Description is the task's desc ("No description" when it has none).
	Description string `json:"description"`
	// IncludeInList is meta.include_in_list: list_agents shows the field.
	IncludeInList bool `json:"include_in_list"`
}

// Field is one metadata field: its value or why there is none.
type Field struct {
	// Value is the task's standard output, trimmed; nil when it printed
	// nothing or failed.
	Value *string `json:"value"`
	// Error says why the field has no value (nil when it ran); a value cut
	// to MaxValueBytes has both.
	Error  *string `json:"error"`
	Schema Schema  `json:"schema"`
}

// Scope is which fields a collection runs.
type Scope int

const (
	// AllFields runs every field (show_agent).
	AllFields Scope = iota
	// ListFields runs only the include_in_list fields (list_agents): the
	// others are counted and described but not run, so a slow field that
	// list_agents does not show cannot slow it down.
	ListFields
)

// Metadata is one workspace's metadata. Its JSON is what Handler serves.
type Metadata struct {
	// Fields by task name.
	Fields map[string]Field `json:"metadata"`
	// Names are the fields in Taskfile order.
	Names []string `json:"names"`
	// Taskfile is the file read ("" when the workspace has none).
	Taskfile string `json:"taskfile"`
	// Err says why no field could be read: a Taskfile that does not parse,
	// or a collection canceled before it ended ("" otherwise).
	Err string `json:"error,omitempty"`
	// ListOnly says only the include_in_list fields were run (ListFields):
	// the others have neither value nor error.
	ListOnly bool `json:"list_only,omitempty"`
}

// Count is the number of fields.
func (m Metadata) Count() int { return len(m.Names) }

// ListValues are the values of the include_in_list fields, as list_agents
// shows them (never nil).
func (m Metadata) ListValues() map[string]*string {
	out := map[string]*string{}
	for name, f := range m.Fields {
		if f.Schema.IncludeInList {
			out[name] = f.Value
		}
	}
	return out
}

// FieldsOrEmpty is Fields, never nil (JSON {} rather than null).
func (m Metadata) FieldsOrEmpty() map[string]Field {
	if m.Fields == nil {
		return map[string]Field{}
	}
	return m.Fields
}

// Defaults of Options.
const (
	DefaultTimeout          = 5 * time.Second
	DefaultFieldConcurrency = 8
	DefaultAgentConcurrency = 16
	DefaultMaxValueBytes    = 4096
	DefaultCacheTTL         = 10 * time.Second
)

// EnvGoTools names the folder of the pinned Go tools
// (scripts/install-go-tools.sh), searched for `task` before PATH.
const EnvGoTools = "AGENTINFRA_GO_TOOLS"

// Options tune a collection; the zero value is the defaults.
type Options struct {
	// TaskBinary is the go-task binary ("" = $AGENTINFRA_GO_TOOLS/task if
	// it exists, else `task` on PATH).
	TaskBinary string
	// Timeout bounds each field's run (0 = 5s).
	Timeout time.Duration
	// FieldConcurrency bounds the fields of one workspace run at once (0 = 8).
	FieldConcurrency int
	// AgentConcurrency bounds the workspaces collected at once by
	// Collector.CollectAll (0 = 16).
	AgentConcurrency int
	// MaxValueBytes caps a value (0 = 4096); the rest of the output is
	// dropped and the field's error says so.
	MaxValueBytes int
	// CacheTTL is how long a Collector keeps a workspace's result (0 =
	// 10s; negative = no cache).
	CacheTTL time.Duration
	// Env is added to the environment of the task runs, after the
	// process's own and GOGC=400 (when the process sets no GOGC): its
	// values win.
	Env []string
}

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.FieldConcurrency <= 0 {
		o.FieldConcurrency = DefaultFieldConcurrency
	}
	if o.AgentConcurrency <= 0 {
		o.AgentConcurrency = DefaultAgentConcurrency
	}
	if o.MaxValueBytes <= 0 {
		o.MaxValueBytes = DefaultMaxValueBytes
	}
	if o.CacheTTL == 0 {
		o.CacheTTL = DefaultCacheTTL
	}
	return o
}

// taskBinary resolves the go-task binary ("" when there is none).
func (o Options) taskBinary() string {
	if o.TaskBinary != "" {
		if p, err := lookPath(o.TaskBinary); err == nil {
			return p
		}
		return ""
	}
	if dir := os.Getenv(EnvGoTools); dir != "" {
		if p, err := lookPath(filepath.Join(dir, "task")); err == nil {
			return p
		}
	}
	p, err := lookPath("task")
	if err != nil {
		return ""
	}
	return p
}
