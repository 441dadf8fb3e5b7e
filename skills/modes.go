package skills

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"

	"github.com/agentinfra/agentinfra/workspace"
)

// Mode is an agent mode: .agent/agents/{name}.md, the system prompt of an
// agent, with optional front matter (description, model, skills).
type Mode struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Model       string   `json:"model"`  // "fast", "deep", a model name, or ""
	Skills      []string `json:"skills"` // always included in its prompts; never nil
	Body        string   `json:"body"`
	Path        string   `json:"path"`
}

// ListModes returns the loadable modes sorted by name and the mode files
// that failed to load (broken front matter).
func ListModes(ctx context.Context, ws *workspace.Workspace) ([]Mode, []Problem, error) {
	names, err := modeNames(ws)
	if err != nil {
		return nil, nil, err
	}
	modes := []Mode{}
	problems := []Problem{}
	for _, n := range names {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		m, err := readMode(ws, n)
		if err != nil {
			p := Problem{Slug: n, Path: ws.ModePath(n), Err: err}
			var fe *FrontMatterError
			if errors.As(err, &fe) {
				p.Line = fe.Line
			}
			problems = append(problems, p)
			continue
		}
		modes = append(modes, m)
	}
	return modes, problems, nil
}

// ModeNames returns the names of the modes in .agent/agents/, sorted: every
// *.md file except README.md and names starting with '_' or '.' (see
// workspace.ModeName).
func ModeNames(ws *workspace.Workspace) []string {
	n, _ := modeNames(ws)
	return n
}

func modeNames(ws *workspace.Workspace) ([]string, error) {
	entries, err := os.ReadDir(ws.AgentsDir())
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return []string{}, nil
		}
		return nil, fmt.Errorf("read agent modes folder: %w", err)
	}
	names := []string{}
	for _, e := range entries {
		name, ok := workspace.ModeName(e.Name())
		if !ok || e.IsDir() {
			continue
		}
		names = append(names, name)
	}
	sort.Strings(names)
	return names, nil
}

// LoadMode reads one mode. A missing mode wraps ErrNotFound and lists the modes that exist.
func LoadMode(ctx context.Context, ws *workspace.Workspace, name string) (Mode, error) {
	if err := ctx.Err(); err != nil {
		return Mode{}, err
	}
	if err := workspace.ValidSlug(name); err != nil {
		return Mode{}, fmt.Errorf("mode %q: %w: %v", name, ErrInvalidSlug, err)
	}
	var m Mode
	err := fs.ErrNotExist // README.md, _draft.md: files next to the modes, not modes
	if _, isMode := workspace.ModeName(name + ".md"); isMode {
		m, err = readMode(ws, name)
	}
	if errors.Is(err, fs.ErrNotExist) {
		names := ModeNames(ws)
		msg := fmt.Sprintf("mode %q: %v: no .agent/agents/%s.md", name, ErrNotFound, name)
		if len(names) == 0 {
			msg += "; there are no modes yet: create .agent/agents/" + name + ".md holding the agent's system prompt"
		} else {
			msg += "; existing modes: " + strings.Join(names, ", ")
			if s := Suggest(name, names); len(s) > 0 {
				msg += " (did you mean " + quoteJoin(s) + "?)"
			}
		}
		return Mode{}, &notFoundError{msg: msg}
	}
	return m, err
}

func readMode(ws *workspace.Workspace, name string) (Mode, error) {
	path := ws.ModePath(name)
	src, err := ws.ReadFile(path) // a symlink out of the workspace is refused
	if errors.Is(err, workspace.ErrOutside) {
		return Mode{}, fmt.Errorf("mode %q: %w", name, err)
	}
	if err != nil {
		return Mode{}, err
	}
	fm, err := parseFrontMatter(path, src)
	if err != nil {
		return Mode{}, fmt.Errorf("mode %q: %w; fix the YAML between the --- lines", name, err)
	}
	m := Mode{Name: name, Body: fm.body, Path: path}
	if m.Description, err = fm.stringField(path, "description"); err != nil {
		return Mode{}, fmt.Errorf("mode %q: %w", name, err)
	}
	if m.Model, err = fm.stringField(path, "model"); err != nil {
		return Mode{}, fmt.Errorf("mode %q: %w", name, err)
	}
	if m.Skills, err = fm.listField(path, "skills"); err != nil {
		return Mode{}, fmt.Errorf("mode %q: %w", name, err)
	}
	return m, nil
}
