// Package prompt decides what an agent is told and which model it runs on.
// Assemble builds the standard prompt of a task (mode, skills, task row and
// README, context files, reporting protocol), the same bytes for the same
// inputs; SelectModel is the pure tier rule (fast or deep by difficulty and
// mode), ChooseModel reads its inputs from the workspace (mode front matter,
// .agent/config.yaml), and ModelFor answers for a task ID. WriteTaskFields is
// the rendering of a matrix row that the task context shares.
//
// prompt reads the workspace and never writes it; it does not run agents
// (package runner) or change tasks (package dispatch).
package prompt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/internal/regularfile"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/skills"
	tasksvc "github.com/agentinfra/agentinfra/task"
	"github.com/agentinfra/agentinfra/workspace"
)

// MaxContextFileBytes bounds one context file; larger files are refused.
const MaxContextFileBytes = 1 << 20

// Kinds of prompt parts, in the order they appear.
const (
	PartMode     = "mode"
	PartSkill    = "skill"
	PartTask     = "task"
	PartContext  = "context"
	PartProtocol = "protocol"
)

// Input is what Assemble needs.
type Input struct {
	Task matrix.Task
	// TaskDir is the task folder; "" means look it up: with Doc's owner
	// rule when Doc is set, else the first folder named {id}_*.
	TaskDir string
	// Doc is the matrix Task was read from (optional): its IDs decide which
	// folder is the task's (auth_v2_login is auth_v2's, not auth's).
	Doc *matrix.Doc
	// Mode overrides the task's mode ("" means Task.Mode).
	Mode string
	// LoadedMode, when set, is the mode, read already (from another
	// workspace: a fleet project's own roles); it wins over Mode.
	LoadedMode *skills.Mode
	// TaskOverride replaces the task README in the prompt.
	TaskOverride string
	// ContextFiles are workspace paths (relative to the root, or absolute) included fenced.
	ContextFiles []string
	// SkillFormat is full, summary or instructions_only ("" means summary).
	SkillFormat string
	// SkipMissingSkills turns a skill that cannot be loaded into a note in the
	// prompt instead of an error.
	SkipMissingSkills bool
	// Getenv locates the global skills folder; nil means os.Getenv.
	Getenv func(string) string
	// ModeAsSystem leaves the mode's text out of Text and returns it in
	// Prompt.System, for a caller that gives it to the agent CLI as its
	// system prompt (the fleet: an agent's role).
	ModeAsSystem bool
}

// Part sizes one section of the prompt so callers can budget.
type Part struct {
	Kind  string `json:"kind"`  // mode | skill | task | context | protocol
	Name  string `json:"name"`  // mode name, skill slug, task ID, context path, "protocol"
	Bytes int    `json:"bytes"` // size of the section in Text
}

// Prompt is an assembled prompt. Text is the parts joined by one blank line.
type Prompt struct {
	Text string `json:"text"`
	// System is the mode's text when Input.ModeAsSystem asked for it apart
	// ("" otherwise, or when the mode file has no text).
	System string `json:"system,omitempty"`
	Parts  []Part `json:"parts"`
	Mode   string `json:"mode"`
	// Skills are the skills included, in order (row's, then the mode's).
	Skills []string `json:"skills"`
	// MissingSkills are skills that could not be loaded (only with SkipMissingSkills).
	MissingSkills []string `json:"missing_skills"`
	// Warnings say what the prompt lacks, e.g. the task's mode has no file.
	Warnings []string `json:"warnings,omitempty"`
}

// Assemble builds the standard prompt for a task: the mode's system
// prompt (or, with ModeAsSystem, nothing: it is in Prompt.System); the skills (the row's, then the mode's, deduplicated); the task
// (its row as fields, then its README or the override); each context file,
// fenced under its path; and the reporting protocol. Same inputs, same bytes.
func Assemble(ctx context.Context, ws *workspace.Workspace, in Input) (Prompt, error) {
	t := in.Task
	modeName := strings.TrimSpace(in.Mode)
	if modeName == "" {
		modeName = t.Mode
	}
	if in.LoadedMode != nil {
		modeName = in.LoadedMode.Name
	}
	if modeName == "" {
		return Prompt{}, fmt.Errorf("task %s has no mode; pass one with --mode (existing modes: %s)", t.ID, ExistingModes(ws))
	}
	var warnings []string
	var mode skills.Mode
	var err error
	if in.LoadedMode != nil {
		mode = *in.LoadedMode
	} else {
		mode, err = skills.LoadMode(ctx, ws, modeName)
	}
	if errors.Is(err, skills.ErrNotFound) && strings.TrimSpace(in.Mode) == "" {
		// The task's own mode names no file (people write `code`, `agent`):
		// the prompt goes without a mode prompt rather than not at all. A
		// --mode that names no file stays an error: that is a typo.
		warnings = append(warnings, fmt.Sprintf("mode %q of task %s has no .agent/agents/%s.md; the prompt goes on without a mode prompt (existing modes: %s)",
			modeName, t.ID, modeName, ExistingModes(ws)))
		mode, err = skills.Mode{Name: modeName}, nil
	}
	if err != nil {
		return Prompt{}, err
	}
	format, err := skills.ValidFormat(in.SkillFormat)
	if err != nil {
		return Prompt{}, err
	}
	taskDir := in.TaskDir
	if taskDir == "" && t.ID != "" {
		taskDir, _ = tasksvc.Folder(ws, in.Doc, t.ID)
	}

	p := Prompt{Mode: modeName, Skills: []string{}, MissingSkills: []string{}, Warnings: warnings}
	var sections []string
	add := func(kind, name, text string) {
		sections = append(sections, text)
		p.Parts = append(p.Parts, Part{Kind: kind, Name: name, Bytes: len(text)})
	}

	// 1. The mode's system prompt (apart, when the caller sends it as one).
	if in.ModeAsSystem {
		p.System = mdtext.TrimBlankLines(mode.Body)
	} else {
		modeText := fmt.Sprintf("# Agent mode: %s\n", modeName)
		if body := mdtext.TrimBlankLines(mode.Body); body != "" {
			modeText += "\n" + body + "\n"
		}
		add(PartMode, modeName, modeText)
	}

	// 2. Skills.
	lib := skills.NewLibrary(ws, in.Getenv)
	first := true
	for _, ref := range SkillRefs(t.Skills, mode.Skills) {
		text, err := skillSection(ctx, lib, ref, format, t.ID, in.SkipMissingSkills)
		if err != nil {
			return Prompt{}, err
		}
		if text.missing {
			p.MissingSkills = append(p.MissingSkills, ref.Slug)
		} else {
			p.Skills = append(p.Skills, ref.Slug)
		}
		if first {
			text.s = "# Skills\n\n" + text.s
			first = false
		}
		add(PartSkill, ref.Slug, text.s)
	}

	// 3. The task.
	task, err := taskSection(ws, t, taskDir, in.TaskOverride)
	if err != nil {
		return Prompt{}, err
	}
	add(PartTask, t.ID, task)

	// 4. Context files.
	for _, cf := range in.ContextFiles {
		if err := ctx.Err(); err != nil {
			return Prompt{}, err
		}
		name, text, err := contextFileSection(ws, cf)
		if err != nil {
			return Prompt{}, err
		}
		add(PartContext, name, text)
	}

	// 5. How to report.
	add(PartProtocol, "protocol", protocolSection(ws, t.ID, taskDir))

	p.Text = strings.Join(sections, "\n")
	return p, nil
}

// SkillRef is one skill a task asks for and who asks: From is "task" (the
// row's Skills cell) or "mode" (the mode file's front matter).
type SkillRef struct {
	Slug, From string
}

// SkillRefs lists the skills of a task in prompt order: the row's, then the
// mode's, each once, blanks dropped.
func SkillRefs(rowSkills, modeSkills []string) []SkillRef {
	seen := map[string]bool{}
	var out []SkillRef
	for _, list := range []struct {
		from  string
		slugs []string
	}{{"task", rowSkills}, {"mode", modeSkills}} {
		for _, s := range list.slugs {
			s = strings.TrimSpace(s)
			if s == "" || seen[s] {
				continue
			}
			seen[s] = true
			out = append(out, SkillRef{s, list.from})
		}
	}
	return out
}

type skillText struct {
	s       string
	missing bool
}

func skillSection(ctx context.Context, lib *skills.Library, ref SkillRef, format, taskID string, skip bool) (skillText, error) {
	s, err := lib.Load(ctx, ref.Slug)
	if err == nil {
		text, err := skills.Render(s, format)
		return skillText{s: text}, err
	}
	if ctx.Err() != nil {
		return skillText{}, ctx.Err()
	}
	where := fmt.Sprintf("task %s names skill %q", taskID, ref.Slug)
	fix := fmt.Sprintf("create .agent/skills/%s/SKILL.md, fix the task's Skills cell (agentinfra task update %s --skills ...)", ref.Slug, taskID)
	if ref.From == "mode" {
		where = fmt.Sprintf("the mode's front matter names skill %q", ref.Slug)
		fix = fmt.Sprintf("create .agent/skills/%s/SKILL.md, fix the mode's skills: list", ref.Slug)
	}
	if !skip {
		if looked, hint, ok := skills.NotFoundParts(err); ok {
			// Said once: where it was looked for, then what to do.
			if hint != "" {
				hint = " (" + hint + ")"
			}
			return skillText{}, &skillError{msg: fmt.Sprintf("%s, which does not exist: %s%s; %s, or pass --skip-missing-skills to assemble the prompt without it", where, looked, hint, fix), err: err}
		}
		return skillText{}, fmt.Errorf("%s, which cannot be loaded: %w; %s, or pass --skip-missing-skills to assemble the prompt without it", where, err, fix)
	}
	note := fmt.Sprintf("## Skill: %s (not available)\n\nThe %s asks for this skill, but it could not be loaded: %s. Work without it and mention this in your tracking notes.\n",
		ref.Slug, ref.From, mdtext.OneLine(err.Error()))
	return skillText{s: note, missing: true}, nil
}

func taskSection(ws *workspace.Workspace, t matrix.Task, taskDir, override string) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "# Task %s\n\n", t.ID)
	WriteTaskFields(&b, t, true)
	relDir := ""
	if taskDir != "" {
		relDir = ws.RelPath(taskDir) + "/"
		mdtext.Field(&b, "Task folder", relDir)
	} else {
		mdtext.Field(&b, "Task folder", "none yet")
	}
	WriteDescription(&b, t)
	b.WriteString("\n")
	switch {
	case strings.TrimSpace(override) != "":
		fmt.Fprintf(&b, "## Instructions\n\nThese instructions were given for this run and replace the task README.\n\n%s\n", mdtext.TrimBlankLines(override))
	case taskDir == "":
		b.WriteString("There is no task folder, so there is no README; work from the description above.\n")
	default:
		readme := filepath.Join(taskDir, "README.md")
		src, err := ws.ReadFile(readme) // a symlink out of the workspace is refused
		switch {
		case errors.Is(err, fs.ErrNotExist):
			fmt.Fprintf(&b, "There is no %sREADME.md; work from the description above.\n", relDir)
		case err != nil:
			return "", fmt.Errorf("read task README: %w", err)
		default:
			fmt.Fprintf(&b, "## README (%sREADME.md)\n\n%s\n", relDir, mdtext.TrimBlankLines(strings.ReplaceAll(string(src), "\r\n", "\n")))
		}
	}
	return b.String(), nil
}

// contextFileErr refuses a context file: invalid input, on the
// context_files field.
func contextFileErr(name, reason string) error {
	return &agenterr.Error{Kind: agenterr.Invalid, Field: "context_files", Value: name, Reason: reason}
}

// outsideLexically: abs (clean) is not under root, whatever is on disk.
func outsideLexically(root, abs string) bool {
	rel, err := filepath.Rel(root, abs)
	return err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func contextFileSection(ws *workspace.Workspace, p string) (name, text string, err error) {
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(ws.Root, abs)
	}
	abs = filepath.Clean(abs)
	name = ws.RelPath(abs)
	real, err := ws.Resolve(p)
	switch {
	case errors.Is(err, fs.ErrNotExist) && outsideLexically(ws.Root, abs):
		// Say where it points before whether it exists: ../../etc/passwd
		// is refused for where it is, not for being absent.
		return "", "", fmt.Errorf("context file %s: %w: %s is outside %s; pass a path inside the workspace", p, workspace.ErrOutside, abs, ws.Root)
	case errors.Is(err, fs.ErrNotExist):
		return "", "", contextFileErr(name, "there is no such file; pass a file of the workspace (relative to its root)")
	case err != nil:
		return "", "", fmt.Errorf("context file %s: %w", p, err)
	}
	if fi, err := os.Stat(real); err == nil && fi.IsDir() {
		return "", "", contextFileErr(name, "it is a folder; pass the files inside it")
	}
	// A regular file only: a FIFO would hang the request forever.
	src, err := regularfile.Read(real, MaxContextFileBytes)
	switch {
	case errors.Is(err, regularfile.ErrNotRegular):
		return "", "", contextFileErr(name, "it is not a regular file (a FIFO, a device); pass a file")
	case errors.Is(err, regularfile.ErrTooLarge):
		return "", "", contextFileErr(name, fmt.Sprintf("it is over the %d-byte limit; pass a smaller file or an excerpt", MaxContextFileBytes))
	case err != nil:
		return "", "", fmt.Errorf("context file %s: %w", name, err)
	}
	if bytes.IndexByte(src[:min(len(src), 8000)], 0) >= 0 {
		return "", "", contextFileErr(name, "it looks binary; pass text files only")
	}
	content := strings.ReplaceAll(string(src), "\r\n", "\n")
	return name, fmt.Sprintf("# Context file: %s\n\n%s", name, mdtext.Fence(content, fenceLang(name))), nil
}

var fenceLangs = map[string]string{
	".go": "go", ".md": "markdown", ".py": "python", ".js": "javascript", ".ts": "typescript",
	".json": "json", ".yaml": "yaml", ".yml": "yaml", ".sh": "bash", ".toml": "toml",
	".rs": "rust", ".c": "c", ".h": "c", ".java": "java", ".sql": "sql", ".html": "html", ".css": "css",
}

func fenceLang(name string) string {
	return fenceLangs[strings.ToLower(filepath.Ext(name))]
}

func protocolSection(ws *workspace.Workspace, id, taskDir string) string {
	dir := ".agent/tasks/" + id + "_<slug>/"
	if taskDir != "" {
		dir = ws.RelPath(taskDir) + "/"
	}
	var b strings.Builder
	b.WriteString("# Reporting protocol\n\n")
	if taskDir == "" {
		fmt.Fprintf(&b, "The task has no folder yet; create %s with tracking/ and artifacts/ inside it.\n\n", dir)
	}
	fmt.Fprintf(&b, "- Log progress as you go in %stracking/: add a dated Markdown note saying what you did, what is left and what blocks you, and update it when you stop.\n", dir)
	fmt.Fprintf(&b, "- Put every output (reports, patches, data, logs) in %sartifacts/.\n", dir)
	fmt.Fprintf(&b, "- When the work is done, hand it over for review: `agentinfra task update %s --status REVIEW` (over MCP: the `task` tool, action `update`, id `%s`, status `REVIEW`).\n", id, id)
	fmt.Fprintf(&b, "- If you cannot go on, set the status to BLOCKED the same way and write the reason in tracking/.\n")
	b.WriteString("- Do not edit .agent/DEVELOPMENT_MATRIX.md by hand; change the task only through agentinfra.\n")
	return b.String()
}

// ExistingModes names the workspace's agent modes for a message, or says how
// to create one when there is none.
func ExistingModes(ws *workspace.Workspace) string {
	names := skills.ModeNames(ws)
	if len(names) == 0 {
		return "none; create .agent/agents/MODE.md"
	}
	return strings.Join(names, ", ")
}

// LoadTask reads the workspace matrix and returns the row of id (the first,
// if the ID is duplicated). An unknown ID wraps matrix.ErrNotFound and names
// close matches.
func LoadTask(ctx context.Context, ws *workspace.Workspace, id string) (matrix.Task, error) {
	id = strings.TrimSpace(id)
	if err := ctx.Err(); err != nil {
		return matrix.Task{}, err
	}
	vocab, err := tasksvc.LoadVocabulary(ws)
	if err != nil {
		return matrix.Task{}, err
	}
	src, err := os.ReadFile(ws.MatrixPath())
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return matrix.Task{}, fmt.Errorf("no matrix at %s; run `agentinfra init` to create one: %w", ws.RelPath(ws.MatrixPath()), err)
		}
		return matrix.Task{}, fmt.Errorf("read the matrix: %w", err)
	}
	return matrix.FindTaskWith(src, id, vocab)
}

// skillError is a skill that cannot go into the prompt, said in the
// prompt's words; it unwraps to the skills package's error.
type skillError struct {
	msg string
	err error
}

func (e *skillError) Error() string { return e.msg }
func (e *skillError) Unwrap() error { return e.err }
