package fleet

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// History returns one page of an agent's task runs, newest first: the
// current run (if any), then the finished ones. page counts from 1;
// pageSize is 1–100 (0 given as "not set" is the caller's business: pass
// DefaultPageSize).
func (f *Fleet) History(ctx context.Context, name string, page, pageSize int) (HistoryPage, error) {
	if err := CheckPage(page, pageSize); err != nil {
		return HistoryPage{}, err
	}
	a, r, err := f.current(ctx, name)
	if err != nil {
		return HistoryPage{}, err
	}
	runs, err := f.finishedRuns(ctx, a.Name)
	if err != nil {
		return HistoryPage{}, err
	}
	all := make([]TaskRun, 0, len(runs)+1)
	if r != nil {
		all = append(all, r.TaskRun)
	}
	for i := len(runs) - 1; i >= 0; i-- {
		all = append(all, runs[i])
	}
	return PageRuns(a.Name, all, page, pageSize)
}

// Roles lists the roles agents of a project can take: the agent modes of
// the project's repository (the fleet's own when project is "" or has none).
func (f *Fleet) Roles(ctx context.Context, project string) ([]Role, error) {
	rolesWS := f.ws
	if project != "" {
		cfg, err := ConfigOf(f.ws)
		if err != nil {
			return nil, err
		}
		p, err := cfg.project(project)
		if err != nil {
			return nil, err
		}
		rolesWS = p.rolesFrom(f.ws)
	}
	modes, err := listRoles(ctx, rolesWS)
	if err != nil {
		return nil, err
	}
	out := []Role{}
	for _, m := range modes {
		out = append(out, Role{Name: m.Name, DisplayName: displayName(m.Path, m.Name), Description: m.Description})
	}
	return out, nil
}

// displayName reads display_name from a mode file's front matter, else
// capitalizes the name.
func displayName(path, name string) string {
	if b, err := os.ReadFile(path); err == nil {
		s := strings.ReplaceAll(string(b), "\r\n", "\n")
		if rest, ok := strings.CutPrefix(s, "---\n"); ok {
			if fm, _, ok := strings.Cut(rest, "\n---"); ok {
				var meta struct {
					DisplayName string `yaml:"display_name"`
				}
				if yaml.Unmarshal([]byte(fm), &meta) == nil && meta.DisplayName != "" {
					return meta.DisplayName
				}
			}
		}
	}
	if name == "" {
		return ""
	}
	return strings.ToUpper(name[:1]) + name[1:]
}

// Projects lists the projects agents can work in.
func (f *Fleet) Projects(ctx context.Context) ([]Project, error) {
	cfg, err := ConfigOf(f.ws)
	if err != nil {
		return nil, err
	}
	return cfg.Projects, nil
}

// joinInts lists up to max numbers ("3, 7, 9 and 2 more").
func joinInts(ns []int, max int) string {
	var parts []string
	for i, n := range ns {
		if i == max {
			return strings.Join(parts, ", ") + fmt.Sprintf(" and %d more", len(ns)-max)
		}
		parts = append(parts, strconv.Itoa(n))
	}
	return strings.Join(parts, ", ")
}
