package dispatch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"

	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/skills"
	"github.com/agentinfra/agentinfra/workspace"
)

// Default bounds of a task context (see ContextOptions).
const (
	DefaultTrackingFiles = 5
	DefaultTrackingBytes = 4000
	DefaultReadmeBytes   = 64 << 10
	DefaultArtifacts     = 200
)

// Link statuses of ContextLink.Status.
const (
	LinkOK       = "ok"       // a workspace path that exists
	LinkMissing  = "missing"  // a workspace path that does not exist
	LinkOutside  = "outside"  // resolves outside the workspace (lexically or through a symlink); not followed
	LinkExternal = "external" // a URL (http:, mailto:, ...); not resolved
)

// ContextOptions bounds what TaskContext reads. Zero values mean the defaults.
type ContextOptions struct {
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

func (o ContextOptions) withDefaults() ContextOptions {
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
	TaskDir  string          `json:"task_dir"`
	Archived bool            `json:"archived"`
	Readme   ContextReadme   `json:"readme"`
	Tracking ContextTracking `json:"tracking"`
	// Artifacts lists the files under artifacts/ (recursively, sorted).
	Artifacts      []ContextArtifact `json:"artifacts"`
	ArtifactsTotal int               `json:"artifacts_total"`
	// Links are the Markdown links of the README, in order of appearance, deduplicated.
	Links  []ContextLink  `json:"links"`
	Skills []ContextSkill `json:"skills"`
	Mode   ContextMode    `json:"mode"`
}

// ContextReadme is the task README.
type ContextReadme struct {
	Path      string `json:"path"` // "" when there is no task folder
	Exists    bool   `json:"exists"`
	Bytes     int    `json:"bytes"` // size of the file
	Truncated bool   `json:"truncated"`
	Content   string `json:"content"`
}

// ContextTracking is the latest tracking files of the task.
type ContextTracking struct {
	Dir string `json:"dir"` // "" when there is no tracking/ folder
	// Total is how many tracking files exist; Entries holds the last MaxFiles of them by name.
	Total         int                    `json:"total"`
	MaxFiles      int                    `json:"max_files"`
	MaxEntryBytes int                    `json:"max_entry_bytes"`
	Entries       []ContextTrackingEntry `json:"entries"`
	// Error says why the folder was not read (e.g. it leaves the workspace).
	Error string `json:"error"`
}

// ContextTrackingEntry is one tracking file, oldest first.
type ContextTrackingEntry struct {
	Path  string `json:"path"`
	Bytes int    `json:"bytes"`
	// Truncated means Content holds only the last MaxEntryBytes bytes.
	Truncated bool   `json:"truncated"`
	Binary    bool   `json:"binary"`
	Content   string `json:"content"`
}

// ContextArtifact is one file under artifacts/.
type ContextArtifact struct {
	Path  string `json:"path"`
	Bytes int64  `json:"bytes"`
}

// ContextLink is one link of the README.
type ContextLink struct {
	Text   string `json:"text"`
	Target string `json:"target"` // as written
	Line   int    `json:"line"`   // 1-based line in the README
	// Path is the workspace-relative path the target names ("" for URLs and
	// targets outside the workspace).
	Path   string `json:"path"`
	Status string `json:"status"` // ok | missing | outside | external
	IsDir  bool   `json:"is_dir"`
}

// ContextSkill is one skill of the task (the row's, then the mode's).
type ContextSkill struct {
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

// ContextMode is the task's agent mode.
type ContextMode struct {
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
func TaskContext(ctx context.Context, ws *workspace.Workspace, id string, opts ContextOptions) (Context, error) {
	opts = opts.withDefaults()
	doc := opts.Doc
	if doc == nil {
		var err error
		doc, err = loadDoc(ctx, ws)
		if err != nil {
			return Context{}, fmt.Errorf("load the task matrix: %w", err)
		}
	}
	id = strings.TrimSpace(id)
	t, ok := doc.Task(id)
	if !ok {
		return Context{}, doc.NotFound(id)
	}
	c := Context{
		Task:      t,
		Artifacts: []ContextArtifact{},
		Links:     []ContextLink{},
		Skills:    []ContextSkill{},
		Tracking:  ContextTracking{MaxFiles: opts.TrackingFiles, MaxEntryBytes: opts.TrackingBytes, Entries: []ContextTrackingEntry{}},
	}
	dir, archived := ws.FindTaskDir(t.ID)
	c.Archived = archived
	if dir != "" {
		c.TaskDir = skills.RelPath(ws, dir) + "/"
		if err := contextReadme(ws, dir, opts, &c); err != nil {
			return Context{}, err
		}
		if err := contextTracking(ws, dir, opts, &c.Tracking); err != nil {
			return Context{}, err
		}
		if err := contextArtifacts(ctx, ws, dir, opts.Artifacts, &c); err != nil {
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
			c.Mode.Path = skills.RelPath(ws, p)
			if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
				c.Mode.Exists = true
				m, err := skills.LoadMode(ctx, ws, t.Mode)
				if err != nil {
					c.Mode.Error = ctxOneLine(err.Error())
				} else {
					modeSkills = m.Skills
				}
			} else {
				c.Mode.Error = fmt.Sprintf("%s does not exist; create it or change the task's mode (existing modes: %s)", c.Mode.Path, promptListOrNone(skills.ModeNames(ws)))
			}
		}
	}

	// Skills.
	lib := skills.NewLibrary(ws, opts.Getenv)
	for _, ref := range promptDedupe(t.Skills, modeSkills) {
		if err := ctx.Err(); err != nil {
			return Context{}, err
		}
		cs := ContextSkill{Slug: ref.slug, From: ref.from}
		s, err := lib.Load(ctx, ref.slug)
		if err == nil {
			var sum string
			sum, err = skills.Render(s, skills.FormatSummary)
			if err == nil {
				cs.Found, cs.Source, cs.Path, cs.Summary = true, s.Source, s.DisplayDir+"/SKILL.md", sum
			}
		}
		if err != nil {
			cs.Error = ctxOneLine(err.Error())
		}
		c.Skills = append(c.Skills, cs)
	}
	return c, nil
}

func ctxOneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func contextReadme(ws *workspace.Workspace, dir string, opts ContextOptions, c *Context) error {
	p := filepath.Join(dir, "README.md")
	c.Readme.Path = skills.RelPath(ws, p)
	src, err := ctxReadInside(ws, p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read task README %s: %w", c.Readme.Path, err)
	}
	src = bytes.ReplaceAll(src, []byte("\r\n"), []byte("\n"))
	c.Readme.Exists = true
	c.Readme.Bytes = len(src)
	c.Links = ctxReadmeLinks(ws, filepath.Dir(p), src)
	if len(src) > opts.ReadmeBytes {
		src = src[:ctxUtf8Floor(src, opts.ReadmeBytes)]
		c.Readme.Truncated = true
	}
	c.Readme.Content = string(src)
	return nil
}

// ctxReadInside reads a regular file after checking that it (symlinks
// followed) stays inside the workspace.
func ctxReadInside(ws *workspace.Workspace, p string) ([]byte, error) {
	if _, err := os.Lstat(p); err != nil {
		return nil, err
	}
	real, err := ws.Resolve(p)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", p)
	}
	return os.ReadFile(real)
}

// ctxUnreadable explains why a file was not read without naming anything
// outside the workspace.
func ctxUnreadable(ws *workspace.Workspace, p string, err error) string {
	if _, rerr := ws.Resolve(p); rerr != nil {
		if _, serr := os.Stat(p); serr == nil {
			return "(not shown: it resolves outside the workspace)"
		}
	}
	if errors.Is(err, fs.ErrPermission) {
		return "(not shown: permission denied)"
	}
	return "(not shown: " + ctxOneLine(strings.TrimPrefix(err.Error(), filepath.Dir(ws.Root))) + ")"
}

// ctxUtf8Floor returns the largest n' <= n that does not split a UTF-8 sequence.
func ctxUtf8Floor(b []byte, n int) int {
	if n >= len(b) {
		return len(b)
	}
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	return n
}

// ctxTail returns the last n bytes of b, starting at a line boundary when one
// is near, and whether it cut anything.
func ctxTail(b []byte, n int) ([]byte, bool) {
	if len(b) <= n {
		return b, false
	}
	start := len(b) - n
	if i := bytes.IndexByte(b[start:], '\n'); i >= 0 && i < n/2 {
		start += i + 1
	}
	for start < len(b) && !utf8.RuneStart(b[start]) {
		start++
	}
	return b[start:], true
}

// ctxTrackingFiles lists the regular files directly under dir/tracking, sorted by name.
func ctxTrackingFiles(dir string) (string, []string, error) {
	td := filepath.Join(dir, "tracking")
	ents, err := os.ReadDir(td)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, nil
	}
	if err != nil {
		return td, nil, fmt.Errorf("read tracking folder: %w", err)
	}
	var names []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") || e.IsDir() {
			continue
		}
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return td, names, nil
}

func contextTracking(ws *workspace.Workspace, dir string, opts ContextOptions, tr *ContextTracking) error {
	td, names, err := ctxTrackingFiles(dir)
	if err != nil || td == "" {
		return err
	}
	tr.Dir = skills.RelPath(ws, td) + "/"
	if _, err := ws.Resolve(td); err != nil {
		tr.Error = "tracking/ resolves outside the workspace; not read"
		return nil
	}
	tr.Total = len(names)
	if len(names) > opts.TrackingFiles {
		names = names[len(names)-opts.TrackingFiles:]
	}
	for _, n := range names {
		p := filepath.Join(td, n)
		e := ContextTrackingEntry{Path: skills.RelPath(ws, p)}
		src, err := ctxReadInside(ws, p)
		if err != nil {
			e.Content = ctxUnreadable(ws, p, err)
			tr.Entries = append(tr.Entries, e)
			continue
		}
		e.Bytes = len(src)
		if bytes.IndexByte(src[:min(len(src), 8000)], 0) >= 0 {
			e.Binary = true
		} else {
			src = bytes.ReplaceAll(src, []byte("\r\n"), []byte("\n"))
			var cut bool
			src, cut = ctxTail(src, opts.TrackingBytes)
			e.Truncated = cut
			e.Content = string(src)
		}
		tr.Entries = append(tr.Entries, e)
	}
	return nil
}

func contextArtifacts(ctx context.Context, ws *workspace.Workspace, dir string, limit int, c *Context) error {
	ad := filepath.Join(dir, "artifacts")
	if _, err := os.Lstat(ad); err != nil {
		return nil
	}
	err := filepath.WalkDir(ad, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		c.ArtifactsTotal++
		if len(c.Artifacts) >= limit {
			return nil
		}
		var size int64
		if fi, err := d.Info(); err == nil {
			size = fi.Size()
		}
		c.Artifacts = append(c.Artifacts, ContextArtifact{Path: skills.RelPath(ws, p), Bytes: size})
		return nil
	})
	if err != nil {
		return fmt.Errorf("list artifacts: %w", err)
	}
	return nil
}

// ctxReadmeLinks returns the Markdown links and images of src (reference links
// resolved by the parser), resolved against base, the README's folder.
func ctxReadmeLinks(ws *workspace.Workspace, base string, src []byte) []ContextLink {
	out := []ContextLink{}
	seen := map[string]bool{}
	root := goldmark.New().Parser().Parse(text.NewReader(src))
	_ = ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		var dest []byte
		switch v := n.(type) {
		case *ast.Link:
			dest = v.Destination
		case *ast.Image:
			dest = v.Destination
		default:
			return ast.WalkContinue, nil
		}
		target := string(dest)
		if target == "" || seen[target] {
			return ast.WalkContinue, nil
		}
		seen[target] = true
		l := ContextLink{Target: target, Text: ctxOneLine(string(ctxNodeText(n, src))), Line: ctxNodeLine(n, src)}
		ctxResolveLink(ws, base, &l)
		if l.Status != "" {
			out = append(out, l)
		}
		return ast.WalkSkipChildren, nil
	})
	return out
}

func ctxNodeText(n ast.Node, src []byte) []byte {
	var b bytes.Buffer
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch t := c.(type) {
		case *ast.Text:
			b.Write(t.Segment.Value(src))
			if t.SoftLineBreak() || t.HardLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(t.Value)
		case *ast.CodeSpan:
			for ch := t.FirstChild(); ch != nil; ch = ch.NextSibling() {
				if tx, ok := ch.(*ast.Text); ok {
					b.Write(tx.Segment.Value(src))
				}
			}
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return b.Bytes()
}

// ctxNodeLine is the 1-based line of an inline node: the position of its first
// text, else the first line of its block.
func ctxNodeLine(n ast.Node, src []byte) int {
	off := -1
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if t, ok := c.(*ast.Text); ok && entering {
			off = t.Segment.Start
			return ast.WalkStop, nil
		}
		return ast.WalkContinue, nil
	})
	if off < 0 {
		for p := n.Parent(); p != nil; p = p.Parent() {
			if p.Type() == ast.TypeBlock && p.Lines().Len() > 0 {
				off = p.Lines().At(0).Start
				break
			}
		}
	}
	if off < 0 {
		return 0
	}
	return bytes.Count(src[:min(off, len(src))], []byte("\n")) + 1
}

// ctxResolveLink sets the status and path of l. Anchors only (#x) get no status
// and are dropped. Nothing outside the workspace is followed or statted
// beyond what ws.Resolve does to refuse it.
func ctxResolveLink(ws *workspace.Workspace, base string, l *ContextLink) {
	t := l.Target
	if strings.HasPrefix(t, "#") {
		return
	}
	if u, err := url.Parse(t); err == nil && (u.Scheme != "" && len(u.Scheme) > 1 || u.Host != "" || strings.HasPrefix(t, "//")) {
		l.Status = LinkExternal
		return
	}
	if i := strings.IndexAny(t, "#?"); i >= 0 {
		t = t[:i]
	}
	if un, err := url.PathUnescape(t); err == nil {
		t = un
	}
	if t == "" {
		return
	}
	var abs string
	if strings.HasPrefix(t, "/") {
		abs = filepath.Join(ws.Root, filepath.FromSlash(t)) // repository-root link, GitHub style
	} else {
		abs = filepath.Join(base, filepath.FromSlash(t))
	}
	rel, err := filepath.Rel(ws.Root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		l.Status = LinkOutside
		return
	}
	l.Path = filepath.ToSlash(rel)
	if _, err := os.Lstat(abs); err != nil {
		l.Status = LinkMissing
		return
	}
	real, err := ws.Resolve(abs)
	if err != nil {
		if _, serr := os.Stat(abs); serr != nil && errors.Is(serr, fs.ErrNotExist) {
			l.Status = LinkMissing // a dangling symlink
			return
		}
		l.Status, l.Path = LinkOutside, ""
		return
	}
	fi, err := os.Stat(real)
	if err != nil {
		l.Status = LinkMissing
		return
	}
	l.Status, l.IsDir = LinkOK, fi.IsDir()
}

// RenderContext renders c as Markdown for people and agents. Same input, same bytes.
func RenderContext(c Context) string {
	var b strings.Builder
	t := c.Task
	fmt.Fprintf(&b, "# Task %s: %s\n\n", t.ID, ctxOneLine(t.Description))
	field := func(k, v string) { writeField(&b, k, v) }
	writeTaskFields(&b, t, false)
	switch {
	case c.TaskDir == "":
		field("Task folder", "none yet")
	case c.Archived:
		field("Task folder", c.TaskDir+" (archived)")
	default:
		field("Task folder", c.TaskDir)
	}
	switch {
	case c.Mode.Name == "":
		field("Mode file", "none (the task has no mode)")
	case c.Mode.Exists && c.Mode.Error == "":
		field("Mode file", c.Mode.Path)
	case c.Mode.Exists:
		field("Mode file", c.Mode.Path+" (cannot be loaded: "+c.Mode.Error+")")
	default:
		field("Mode file", "missing: "+c.Mode.Error)
	}

	b.WriteString("\n## README\n\n")
	switch {
	case c.TaskDir == "":
		b.WriteString("There is no task folder, so there is no README.\n")
	case !c.Readme.Exists:
		fmt.Fprintf(&b, "There is no %s.\n", c.Readme.Path)
	default:
		fmt.Fprintf(&b, "From %s", c.Readme.Path)
		if c.Readme.Truncated {
			fmt.Fprintf(&b, " (truncated: the first %d of %d bytes)", len(c.Readme.Content), c.Readme.Bytes)
		}
		b.WriteString(":\n\n")
		ctxWriteFenced(&b, c.Readme.Content, "markdown")
	}

	b.WriteString("\n## Links in the README\n\n")
	if len(c.Links) == 0 {
		b.WriteString("None.\n")
	}
	for _, l := range c.Links {
		txt := l.Text
		if txt == "" {
			txt = l.Target
		}
		switch l.Status {
		case LinkOK:
			kind := "file"
			if l.IsDir {
				kind = "folder"
			}
			fmt.Fprintf(&b, "- line %d: [%s] -> %s (%s)\n", l.Line, txt, l.Path, kind)
		case LinkMissing:
			fmt.Fprintf(&b, "- line %d: [%s] -> %s (MISSING: no such file in the workspace)\n", l.Line, txt, l.Path)
		case LinkOutside:
			fmt.Fprintf(&b, "- line %d: [%s] -> %s (OUTSIDE the workspace; not followed)\n", l.Line, txt, l.Target)
		case LinkExternal:
			fmt.Fprintf(&b, "- line %d: [%s] -> %s (external)\n", l.Line, txt, l.Target)
		}
	}

	tr := c.Tracking
	b.WriteString("\n## Tracking\n\n")
	switch {
	case c.TaskDir == "" || tr.Dir == "":
		b.WriteString("No tracking/ folder.\n")
	case tr.Error != "":
		fmt.Fprintf(&b, "%s: %s.\n", tr.Dir, tr.Error)
	case tr.Total == 0:
		fmt.Fprintf(&b, "%s is empty.\n", tr.Dir)
	default:
		fmt.Fprintf(&b, "The last %d of %d files in %s by name, oldest first; each entry shows at most its last %d bytes.\n",
			len(tr.Entries), tr.Total, tr.Dir, tr.MaxEntryBytes)
		for _, e := range tr.Entries {
			fmt.Fprintf(&b, "\n### %s\n\n", e.Path)
			switch {
			case e.Binary:
				fmt.Fprintf(&b, "(binary file, %d bytes; not shown)\n", e.Bytes)
			case e.Truncated:
				fmt.Fprintf(&b, "(truncated: the last %d of %d bytes)\n\n", len(e.Content), e.Bytes)
				ctxWriteFenced(&b, e.Content, "markdown")
			default:
				ctxWriteFenced(&b, e.Content, "markdown")
			}
		}
	}

	b.WriteString("\n## Artifacts\n\n")
	if len(c.Artifacts) == 0 {
		b.WriteString("None.\n")
	}
	for _, a := range c.Artifacts {
		fmt.Fprintf(&b, "- %s (%d bytes)\n", a.Path, a.Bytes)
	}
	if c.ArtifactsTotal > len(c.Artifacts) {
		fmt.Fprintf(&b, "- ... and %d more (showing %d of %d)\n", c.ArtifactsTotal-len(c.Artifacts), len(c.Artifacts), c.ArtifactsTotal)
	}

	b.WriteString("\n## Skills\n\n")
	if len(c.Skills) == 0 {
		b.WriteString("None.\n")
	}
	for _, s := range c.Skills {
		if !s.Found {
			fmt.Fprintf(&b, "- %s (named by the %s): MISSING: %s\n", s.Slug, s.From, s.Error)
			continue
		}
		fmt.Fprintf(&b, "- %s (named by the %s): %s skill, %s\n", s.Slug, s.From, s.Source, s.Path)
	}
	// The summaries, each a "## Skill: ..." section of its own.
	for _, s := range c.Skills {
		if s.Found {
			fmt.Fprintf(&b, "\n%s", s.Summary)
		}
	}
	return b.String()
}

// ctxWriteFenced writes content in a code fence longer than any backtick run inside it.
func ctxWriteFenced(b *strings.Builder, content, lang string) {
	fence := strings.Repeat("`", max(3, promptLongestRun(content, '`')+1))
	content = strings.TrimSuffix(content, "\n")
	fmt.Fprintf(b, "%s%s\n%s\n%s\n", fence, lang, content, fence)
}
