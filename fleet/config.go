package fleet

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/agentinfra/agentinfra/workspace"
)

// Config is the fleet's part of .agent/config.yaml:
//
//	fleet:
//	  backend: local               # local (this machine) or coder
//	  cli: claude                  # default agent CLI (gemini, claude, codex)
//	  role: coder                  # default role
//	  branch_prefix: agent/        # agents work on {branch_prefix}{name}
//	  worktree_dir: ../{repo}-agents   # where worktrees go, relative to the project
//	  setup: npm ci                # run in a new worktree (sh -c) before the first task
//	  timeout: 30m                 # bound of one run
//	  approval_mode: yolo          # default|auto_edit|yolo
//	projects:
//	  - name: web
//	    display_name: Web app
//	    description: The storefront
//	    path: ../web               # relative to the workspace root
//	    base_branch: main
//	    backend: local
type Config struct {
	Backend      string        `yaml:"backend"`
	CLI          string        `yaml:"cli"`
	Role         string        `yaml:"role"`
	BranchPrefix string        `yaml:"branch_prefix"`
	WorktreeDir  string        `yaml:"worktree_dir"`
	Setup        string        `yaml:"setup"`
	Timeout      time.Duration `yaml:"-"`
	TimeoutText  string        `yaml:"timeout"`
	ApprovalMode string        `yaml:"approval_mode"`
	Projects     []Project     `yaml:"-"`
}

type configFile struct {
	Fleet    Config `yaml:"fleet"`
	Projects []struct {
		Name        string `yaml:"name"`
		DisplayName string `yaml:"display_name"`
		Description string `yaml:"description"`
		Path        string `yaml:"path"`
		BaseBranch  string `yaml:"base_branch"`
		Backend     string `yaml:"backend"`
	} `yaml:"projects"`
}

// Defaults of the fleet configuration.
const (
	DefaultCLI          = "gemini"
	DefaultRole         = "coder"
	DefaultBranchPrefix = "agent/"
	DefaultTimeout      = 30 * time.Minute
	DefaultApproval     = "yolo"
	BackendLocal        = "local"
	BackendCoder        = "coder"
)

// LoadConfig reads the fleet and projects sections of .agent/config.yaml
// (defaults when the file or the sections are missing). The workspace's own
// repository is always a project, named after its folder.
func LoadConfig(ws *workspace.Workspace) (Config, error) {
	var cf configFile
	path := filepath.Join(ws.AgentDir(), "config.yaml")
	b, err := ws.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return Config{}, err
	default:
		if err := yaml.Unmarshal(b, &cf); err != nil {
			return Config{}, badInput("config", "%s: %v", path, err)
		}
	}
	c := cf.Fleet
	if c.Backend == "" {
		c.Backend = BackendLocal
	}
	if c.CLI == "" {
		c.CLI = DefaultCLI
	}
	if c.Role == "" {
		c.Role = DefaultRole
	}
	if c.BranchPrefix == "" {
		c.BranchPrefix = DefaultBranchPrefix
	}
	if c.ApprovalMode == "" {
		c.ApprovalMode = DefaultApproval
	}
	c.Timeout = DefaultTimeout
	if c.TimeoutText != "" {
		d, err := time.ParseDuration(c.TimeoutText)
		if err != nil || d <= 0 {
			return Config{}, badInput("config", "%s: fleet.timeout %q: use a duration such as 30m", path, c.TimeoutText)
		}
		c.Timeout = d
	}
	self := filepath.Base(ws.Root)
	c.Projects = []Project{{Name: self, DisplayName: self, Description: "this repository", Path: ws.Root, Backend: BackendLocal}}
	for i, p := range cf.Projects {
		if p.Name == "" {
			return Config{}, badInput("config", "%s: projects[%d] has no name", path, i)
		}
		pp := p.Path
		if pp == "" {
			pp = ws.Root
		} else if !filepath.IsAbs(pp) {
			pp = filepath.Join(ws.Root, pp)
		}
		pr := Project{Name: p.Name, DisplayName: p.DisplayName, Description: p.Description, Path: filepath.Clean(pp), BaseBranch: p.BaseBranch, Backend: p.Backend}
		if pr.DisplayName == "" {
			pr.DisplayName = pr.Name
		}
		if pr.Backend == "" {
			pr.Backend = BackendLocal
		}
		if strings.EqualFold(pr.Name, self) { // the config describes this repository
			c.Projects[0] = pr
			continue
		}
		c.Projects = append(c.Projects, pr)
	}
	return c, nil
}

// project finds a project by name (case-insensitive).
func (c Config) project(name string) (Project, error) {
	names := make([]string, 0, len(c.Projects))
	for _, p := range c.Projects {
		if strings.EqualFold(p.Name, name) {
			return p, nil
		}
		names = append(names, p.Name)
	}
	return Project{}, notFound("project", "no project %q: the projects are %s", name, strings.Join(names, ", "))
}

// baseBranch is the project's base branch, else the branch checked out there.
func (p Project) baseBranch() (string, error) {
	if p.BaseBranch != "" {
		return p.BaseBranch, nil
	}
	out, err := exec.Command("git", "-C", p.Path, "symbolic-ref", "--short", "-q", "HEAD").Output()
	if b := strings.TrimSpace(string(out)); err == nil && b != "" {
		return b, nil
	}
	return "HEAD", nil
}

// worktreePath is where the agent's worktree goes: outside the repository
// by default, next to it in {repo}-agents/.
func (c Config) worktreePath(p Project, name string) string {
	dir := c.WorktreeDir
	if dir == "" {
		dir = "../{repo}-agents"
	}
	dir = strings.ReplaceAll(dir, "{repo}", filepath.Base(p.Path))
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(p.Path, dir)
	}
	return filepath.Join(filepath.Clean(dir), key(name))
}

func isCLI(s string) bool { return s == "gemini" || s == "claude" || s == "codex" }

// rolesFrom is the workspace whose agent modes are the project's roles: the
// project's own .agent/agents/ when it has one, else the fleet's (a project
// without modes of its own shares them).
func (p Project) rolesFrom(fleetWS *workspace.Workspace) *workspace.Workspace {
	if p.Path == "" || p.Path == fleetWS.Root {
		return fleetWS
	}
	ws, err := workspace.New(p.Path)
	if err != nil {
		return fleetWS
	}
	if fi, err := os.Stat(ws.AgentsDir()); err != nil || !fi.IsDir() {
		return fleetWS
	}
	return ws
}
