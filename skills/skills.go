// Package skills loads Agent Skills (a folder {slug}/SKILL.md with YAML front
// matter and a Markdown body, plus resource files) and agent modes
// (.agent/agents/{mode}.md), and renders skills in the formats prompts use.
//
// Skills are looked up in the workspace (.agent/skills/) first, then in the
// global folder ($AGENTINFRA_GLOBAL_SKILLS, default ~/.agent/global_skills/);
// a workspace skill shadows a global one with the same slug.
package skills

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/workspace"
)

// EnvGlobalSkills overrides the global skills folder.
const EnvGlobalSkills = "AGENTINFRA_GLOBAL_SKILLS"

// Sources of a skill.
const (
	SourceWorkspace = "workspace"
	SourceGlobal    = "global"
)

// ErrNotFound is wrapped by errors for unknown skills and modes.
var ErrNotFound = agenterr.New(agenterr.NotFound, "not found")

// ErrInvalidSlug is wrapped when a slug cannot name a folder (/, .., leading dot).
var ErrInvalidSlug = agenterr.New(agenterr.Invalid, "invalid name")

// Skill is one loaded SKILL.md.
type Skill struct {
	Slug        string         `json:"slug"`
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Meta        map[string]any `json:"meta"` // every front-matter key, name and description included
	Body        string         `json:"body"`
	Dir         string         `json:"dir"`  // absolute folder
	Path        string         `json:"path"` // absolute SKILL.md path
	// DisplayDir is Dir as shown to agents: workspace-relative for workspace
	// skills, ~/... for global skills under the home folder, else absolute.
	DisplayDir string   `json:"display_dir"`
	Resources  []string `json:"resources"` // other files in the folder, slash-separated, sorted
	Source     string   `json:"source"`    // "workspace" | "global"
}

// Problem is a skill that could not be loaded while listing.
type Problem struct {
	Slug string `json:"slug"`
	Path string `json:"path"`
	Line int    `json:"line"`
	Err  error  `json:"-"`
}

func (p Problem) Error() string { return p.Err.Error() }

// root is one folder searched for skills.
type root struct {
	dir     string
	source  string
	display string // how the folder is shown
}

// Library finds skills in the workspace and global folders.
type Library struct {
	roots []root
	// ws and global are where a SKILL.md may resolve to (symlinks
	// followed): workspace.ReadFile refuses the rest.
	ws     *workspace.Workspace
	global string
}

// NewLibrary returns the skill library of ws. getenv reads the environment
// (nil means os.Getenv); with neither AGENTINFRA_GLOBAL_SKILLS nor HOME set
// there is no global folder. ws may be nil (global skills only).
func NewLibrary(ws *workspace.Workspace, getenv func(string) string) *Library {
	if getenv == nil {
		getenv = os.Getenv
	}
	l := &Library{ws: ws}
	if ws != nil {
		l.roots = append(l.roots, root{dir: ws.SkillsDir(), source: SourceWorkspace, display: ".agent/skills"})
	}
	home := getenv("HOME")
	if g := getenv(EnvGlobalSkills); g != "" {
		l.roots = append(l.roots, root{dir: g, source: SourceGlobal, display: displayHome(g, home)})
		l.global = g
	} else if home != "" {
		g := filepath.Join(home, ".agent", "global_skills")
		l.roots = append(l.roots, root{dir: g, source: SourceGlobal, display: "~/.agent/global_skills"})
		l.global = g
	}
	return l
}

// readSkillFile reads a file of a skill: it must resolve inside the
// workspace or the global skills folder (workspace.ReadFile).
func (l *Library) readSkillFile(path string) ([]byte, error) {
	if l.ws != nil {
		return l.ws.ReadFile(path, l.global)
	}
	return (&workspace.Workspace{Root: l.global}).ReadFile(path)
}

func displayHome(p, home string) string {
	if home != "" {
		if rel, err := filepath.Rel(home, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			if rel == "." {
				return "~"
			}
			return "~/" + filepath.ToSlash(rel)
		}
	}
	return filepath.ToSlash(p)
}

// Dirs returns the searched folders in lookup order.
func (l *Library) Dirs() []string {
	out := make([]string, len(l.roots))
	for i, r := range l.roots {
		out[i] = r.dir
	}
	return out
}

// List returns every loadable skill sorted by slug (workspace shadowing global)
// and the skills that failed to load. The error is only for unreadable folders.
func (l *Library) List(ctx context.Context) ([]Skill, []Problem, error) {
	seen := map[string]bool{}
	skills := []Skill{}
	problems := []Problem{}
	for _, r := range l.roots {
		slugs, err := skillSlugs(r.dir)
		if err != nil {
			return nil, nil, err
		}
		for _, slug := range slugs {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
			if seen[slug] {
				continue
			}
			seen[slug] = true
			s, err := l.loadFrom(r, slug)
			if err != nil {
				p := Problem{Slug: slug, Path: filepath.Join(r.dir, slug, "SKILL.md"), Err: err}
				var fe *FrontMatterError
				if errors.As(err, &fe) {
					p.Line = fe.Line
				}
				problems = append(problems, p)
				continue
			}
			skills = append(skills, s)
		}
	}
	sort.Slice(skills, func(i, j int) bool { return skills[i].Slug < skills[j].Slug })
	sort.Slice(problems, func(i, j int) bool { return problems[i].Slug < problems[j].Slug })
	return skills, problems, nil
}

// Slugs returns the slugs of every skill folder (loadable or not), sorted, deduplicated.
func (l *Library) Slugs() []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range l.roots {
		slugs, _ := skillSlugs(r.dir)
		for _, s := range slugs {
			if !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	sort.Strings(out)
	return out
}

// skillSlugs lists the sub-folders of dir holding a SKILL.md. A missing dir is empty.
func skillSlugs(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("read skills folder: %w", err)
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if !workspace.IsSkillFolder(name) {
			continue
		}
		if fi, err := os.Stat(filepath.Join(dir, name, "SKILL.md")); err == nil && fi.Mode().IsRegular() {
			out = append(out, name)
		}
	}
	return out, nil
}

// Load returns one skill by slug. An invalid slug wraps ErrInvalidSlug; an
// unknown one wraps ErrNotFound and names close matches.
func (l *Library) Load(ctx context.Context, slug string) (Skill, error) {
	if err := ctx.Err(); err != nil {
		return Skill{}, err
	}
	if err := workspace.ValidSlug(slug); err != nil {
		return Skill{}, fmt.Errorf("skill %q: %w: %v; a skill is named by its folder name, e.g. go-testing", slug, ErrInvalidSlug, err)
	}
	for _, r := range l.roots {
		p := filepath.Join(r.dir, slug, "SKILL.md")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && workspace.IsSkillFolder(slug) {
			return l.loadFrom(r, slug)
		}
	}
	return Skill{}, l.notFound(slug)
}

func (l *Library) notFound(slug string) error {
	where := make([]string, len(l.roots))
	for i, r := range l.roots {
		where[i] = r.display + "/"
	}
	e := &notFoundError{looked: fmt.Sprintf("no %s/SKILL.md in %s", slug, strings.Join(where, " or "))}
	if len(where) == 0 {
		e.looked = "no skills folder configured"
	}
	e.msg = fmt.Sprintf("skill %q: %v: %s", slug, ErrNotFound, e.looked)
	// The skills that load: a listed name that does not (a broken SKILL.md,
	// a symlink out of the workspace) is no choice to offer.
	loaded, _, _ := l.List(context.Background())
	all := make([]string, 0, len(loaded))
	for _, sk := range loaded {
		all = append(all, sk.Slug)
	}
	if s := Suggest(slug, all); len(s) > 0 {
		e.hint = "did you mean " + quoteJoin(s) + "?"
	} else if len(all) > 0 {
		e.hint = fmt.Sprintf("run `agentinfra skill list` to see the %d available", len(all))
	}
	e.fix = "create .agent/skills/" + slug + "/SKILL.md"
	switch {
	case e.hint != "":
		e.msg += "; " + e.hint
	default:
		e.msg += "; " + e.fix
	}
	return e
}

type notFoundError struct {
	msg string
	// looked says where a skill was looked for, hint names close or
	// available ones, fix what creates it: a caller with its own advice
	// (the prompt) says each once (NotFoundParts).
	looked, hint, fix string
}

func (e *notFoundError) Error() string { return e.msg }
func (e *notFoundError) Unwrap() error { return ErrNotFound }

// NotFoundParts splits a skill's not-found error: where it was looked for
// ("no x/SKILL.md in .agent/skills/ or ~/.agent/global_skills/") and a hint
// ("did you mean ...?"; "" when none). ok is false for any other error.
func NotFoundParts(err error) (looked, hint string, ok bool) {
	var nf *notFoundError
	if !errors.As(err, &nf) || nf.looked == "" {
		return "", "", false
	}
	return nf.looked, nf.hint, true
}

func quoteJoin(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

func (l *Library) loadFrom(r root, slug string) (Skill, error) {
	dir := filepath.Join(r.dir, slug)
	path := filepath.Join(dir, "SKILL.md")
	src, err := l.readSkillFile(path)
	if err != nil {
		return Skill{}, fmt.Errorf("read skill %q: %w", slug, err)
	}
	fm, err := parseFrontMatter(path, src)
	if err != nil {
		return Skill{}, fmt.Errorf("skill %q: %w; fix the YAML between the --- lines", slug, err)
	}
	name, err := fm.stringField(path, "name")
	if err != nil {
		return Skill{}, fmt.Errorf("skill %q: %w", slug, err)
	}
	desc, err := fm.stringField(path, "description")
	if err != nil {
		return Skill{}, fmt.Errorf("skill %q: %w", slug, err)
	}
	if name == "" {
		name = slug
	}
	res, err := resources(dir)
	if err != nil {
		return Skill{}, fmt.Errorf("skill %q: %w", slug, err)
	}
	meta := fm.meta
	if meta == nil {
		meta = map[string]any{}
	}
	return Skill{
		Slug:        slug,
		Name:        name,
		Description: desc,
		Meta:        meta,
		Body:        fm.body,
		Dir:         dir,
		Path:        path,
		DisplayDir:  r.display + "/" + slug,
		Resources:   res,
		Source:      r.source,
	}, nil
}

// resources lists the files in a skill folder other than SKILL.md, skipping
// hidden files and folders, as sorted slash-separated relative paths.
func resources(dir string) ([]string, error) {
	out := []string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel != "SKILL.md" {
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list resources: %w", err)
	}
	sort.Strings(out)
	return out, nil
}
