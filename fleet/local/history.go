package local

import (
	"context"
	"os"
	"strings"

	"github.com/agentinfra/agentinfra/fleet"
	"go.yaml.in/yaml/v3"
)

// History returns one page of an agent's task runs, newest first: the
// current run (if any), then the finished ones. page counts from 1;
// pageSize is 1–100 (0 given as "not set" is the caller's business: pass
// DefaultPageSize).
func (f *Fleet) History(ctx context.Context, name string, page, pageSize int) (fleet.HistoryPage, error) {
	if err := fleet.CheckPage(page, pageSize); err != nil {
		return fleet.HistoryPage{}, err
	}
	a, r, err := f.current(ctx, name)
	if err != nil {
		return fleet.HistoryPage{}, err
	}
	runs, err := f.finishedRuns(ctx, a.Name)
	if err != nil {
		return fleet.HistoryPage{}, err
	}
	all := make([]fleet.TaskRun, 0, len(runs)+1)
	if r != nil {
		all = append(all, r.TaskRun)
	}
	for i := len(runs) - 1; i >= 0; i-- {
		all = append(all, runs[i])
	}
	return fleet.PageRuns(a.Name, all, page, pageSize)
}

// Roles lists the roles agents of a project can take: the agent modes of
// the project's repository (the fleet's own when project is "" or has none).
func (f *Fleet) Roles(ctx context.Context, project string) ([]fleet.Role, error) {
	rolesWS := f.ws
	if project != "" {
		cfg, err := fleet.ConfigOf(f.ws)
		if err != nil {
			return nil, err
		}
		p, err := cfg.Project(project)
		if err != nil {
			return nil, err
		}
		rolesWS = p.RolesFrom(f.ws)
	}
	modes, err := listRoles(ctx, rolesWS)
	if err != nil {
		return nil, err
	}
	out := []fleet.Role{}
	for _, m := range modes {
		out = append(out, fleet.Role{Name: m.Name, DisplayName: displayName(m.Path, m.Name), Description: m.Description})
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
func (f *Fleet) Projects(ctx context.Context) ([]fleet.Project, error) {
	cfg, err := fleet.ConfigOf(f.ws)
	if err != nil {
		return nil, err
	}
	return cfg.Projects, nil
}
