// Package taskcontext gathers everything an agent needs to start a task:
// its matrix row, task folder and README, the latest tracking notes (bounded),
// the artifacts, the README's links resolved inside the workspace, the
// summaries of its skills and its mode file (Build), and renders them as
// Markdown (Render). Nothing outside the workspace is read or followed.
//
// taskcontext only reads; it does not assemble prompts (package prompt) or
// change tasks.
package taskcontext

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/prompt"
	"github.com/agentinfra/agentinfra/skills"
	tasksvc "github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// Default bounds of a task context (see Options).
const (
	DefaultTrackingFiles = 5
	DefaultTrackingBytes = 4000
	DefaultReadmeBytes   = 64 << 10
	DefaultArtifacts     = 200
)

// Link statuses of Link.Status.
const (
	LinkOK       = "ok"       // a workspace path that exists
	LinkMissing  = "missing"  // a workspace path that does not exist
	LinkOutside  = "outside"  // resolves outside the workspace (lexically or through a symlink); not followed
	LinkExternal = "external" // a URL (http:, mailto:, ...); not resolved
)

// Options bounds what TaskContext reads. Zero values mean the defaults.
type Options struct {
	// Doc is the parsed matrix; nil means load ws.MatrixPath().
	Doc *matrix.Doc
	// TrackingFiles is how many tracking files to include: the last N under
	// tracking/ sorted by name (default DefaultTrackingFiles).
	TrackingFiles int
	// TrackingBytes bounds each tracking entry; longer ones keep their last
	// TrackingBytes bytes, the most recent part of a log (default DefaultTrackingBytes).
	TrackingBytes int
	// ReadmeBytes bounds the README; longer ones keep their first ReadmeBytes bytes.
	ReadmeBytes int
	// Artifacts bounds the artifacts list (default DefaultArtifacts).
	Artifacts int
	// Getenv locates the global skills folder; nil means os.Getenv.
	Getenv func(string) string
}

func (o Options) withDefaults() Options {
	if o.TrackingFiles <= 0 {
		o.TrackingFiles = DefaultTrackingFiles
	}
	if o.TrackingBytes <= 0 {
		o.TrackingBytes = DefaultTrackingBytes
	}
	if o.ReadmeBytes <= 0 {
		o.ReadmeBytes = DefaultReadmeBytes
	}
	if o.Artifacts <= 0 {
		o.Artifacts = DefaultArtifacts
	}
	return o
}

// Context is everything an agent picking up a task needs to look at. Paths
// are workspace-relative and slash-separated; lists are never nil.
type Context struct {
	Task matrix.Task `json:"task"`
	// TaskDir is the task folder ("" when there is none), with a trailing slash.
	TaskDir  string   `json:"task_dir"`
	Archived bool     `json:"archived"`
	Readme   Readme   `json:"readme"`
	Tracking Tracking `json:"tracking"`
	// Artifacts lists the files under artifacts/ (recursively, sorted).
	Artifacts      []Artifact `json:"artifacts"`
	ArtifactsTotal int        `json:"artifacts_total"`
	// Links are the Markdown links of the README, in order of appearance, deduplicated.
	Links  []Link  `json:"links"`
	Skills []Skill `json:"skills"`
	Mode   Mode    `json:"mode"`
}

// Readme is the task README.
type Readme struct {
	Path      string `json:"path"` // "" when there is no task folder
	Exists    bool   `json:"exists"`
	Bytes     int    `json:"bytes"` // size of the file
	Truncated bool   `json:"truncated"`
	Content   string `json:"content"`
}

// Tracking is the latest tracking files of the task.
type Tracking struct {
	Dir string `json:"dir"` // "" when there is no tracking/ folder
	// Total is how many tracking files exist; Entries holds the last MaxFiles of them by name.
	Total         int             `json:"total"`
	MaxFiles      int             `json:"max_files"`
	MaxEntryBytes int             `json:"max_entry_bytes"`
	Entries       []TrackingEntry `json:"entries"`
	// Error says why the folder was not read (e.g. it leaves the workspace).
	Error string `json:"error"`
}

// TrackingEntry is one tracking file, oldest first.
type TrackingEntry struct {
	Path  string `json:"path"`
	Bytes int    `json:"bytes"`
	// Truncated means Content holds only the last MaxEntryBytes bytes.
	Truncated bool   `json:"truncated"`
	Binary    bool   `json:"binary"`
	Content   string `json:"content"`
}

// Artifact is one file under artifacts/.
type Artifact struct {
	Path  string `json:"path"`
	Bytes int64  `json:"bytes"`
}

// Link is one link of the README.
type Link struct {
	Text   string `json:"text"`
	Target string `json:"target"` // as written
	Line   int    `json:"line"`   // 1-based line in the README
	// Path is the workspace-relative path the target names ("" for URLs and
	// targets outside the workspace).
	Path   string `json:"path"`
	Status string `json:"status"` // ok | missing | outside | external
	IsDir  bool   `json:"is_dir"`
}

// Skill is one skill of the task (the row's, then the mode's).
type Skill struct {
	Slug   string `json:"slug"`
	From   string `json:"from"` // "task" or "mode"
	Found  bool   `json:"found"`
	Source string `json:"source"` // workspace | global | ""
	Path   string `json:"path"`   // SKILL.md as shown to agents
	// Summary is the skill in the skills package's summary format.
	Summary string `json:"summary"`
	// Error says why the skill could not be loaded.
	Error string `json:"error"`
}

// Mode is the task's agent mode.
type Mode struct {
	Name   string `json:"name"`
	Path   string `json:"path"` // "" when the task has no mode
	Exists bool   `json:"exists"`
	// Error is set when the mode file exists but cannot be loaded.
	Error string `json:"error"`
}

// TaskContext gathers the context of task id: its row, folder, README,
// latest tracking entries (bounded), artifacts, the README's links resolved
// inside the workspace, skill summaries and the mode file. An unknown ID
// wraps matrix.ErrNotFound and names close matches. A missing skill or mode
// is reported in the result, not as an error.
func Build(ctx context.Context, ws *workspace.Workspace, id string, opts Options) (Context, error) {
	opts = opts.withDefaults()
	doc := opts.Doc
	if doc == nil {
		store, err := tasksvc.OpenStore(ws)
		if err == nil {
			doc, err = store.Load(ctx)
		}
		if err != nil {
			return Context{}, fmt.Errorf("load the task matrix: %w", err)
		}
	}
	id = strings.TrimSpace(id)
	t, err := doc.Lookup(id)
	if err != nil {
		return Context{}, err
	}
	c := Context{
		Task:      t,
		Artifacts: []Artifact{},
		Links:     []Link{},
		Skills:    []Skill{},
		Tracking:  Tracking{MaxFiles: opts.TrackingFiles, MaxEntryBytes: opts.TrackingBytes, Entries: []TrackingEntry{}},
	}
	dir, archived := tasksvc.Folder(ws, doc, t.ID)
	c.Archived = archived
	if dir != "" {
		c.TaskDir = ws.RelPath(dir) + "/"
		if err := readReadme(ws, dir, opts, &c); err != nil {
			return Context{}, err
		}
		if err := readTracking(ws, dir, &c.Tracking); err != nil {
			return Context{}, err
		}
		if err := listArtifacts(ctx, ws, dir, opts.Artifacts, &c); err != nil {
			return Context{}, err
		}
	}

	// Mode.
	var modeSkills []string
	if t.Mode != "" {
		c.Mode.Name = t.Mode
		if err := workspace.ValidSlug(t.Mode); err != nil {
			c.Mode.Error = fmt.Sprintf("mode name %q is not usable as a file name: %v", t.Mode, err)
		} else {
			p := ws.ModePath(t.Mode)
			c.Mode.Path = ws.RelPath(p)
			if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
				c.Mode.Exists = true
				m, err := skills.LoadMode(ctx, ws, t.Mode)
				if err != nil {
					c.Mode.Error = mdtext.OneLine(err.Error())
				} else {
					modeSkills = m.Skills
				}
			} else {
				c.Mode.Error = fmt.Sprintf("%s does not exist; create it or change the task's mode (existing modes: %s)", c.Mode.Path, prompt.ExistingModes(ws))
			}
		}
	}

	// Skills.
	lib := skills.NewLibrary(ws, opts.Getenv)
	for _, ref := range prompt.SkillRefs(t.Skills, modeSkills) {
		if err := ctx.Err(); err != nil {
			return Context{}, err
		}
		cs := Skill{Slug: ref.Slug, From: ref.From}
		s, err := lib.Load(ctx, ref.Slug)
		if err == nil {
			var sum string
			sum, err = skills.Render(s, skills.FormatSummary)
			if err == nil {
				cs.Found, cs.Source, cs.Path, cs.Summary = true, s.Source, s.DisplayDir+"/SKILL.md", sum
			}
		}
		if err != nil {
			cs.Error = mdtext.OneLine(err.Error())
		}
		c.Skills = append(c.Skills, cs)
	}
	return c, nil
}
