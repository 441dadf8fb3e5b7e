package fleet

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/workspace"
)

// Config is the fleet's settings: the fleet and projects sections of
// .agent/config.yaml (config.Fleet, decoded once per workspace) with the
// defaults filled in, and the projects as the fleet shows them.
type Config struct {
	Backend      string
	CLI          string
	Role         string
	BranchPrefix string
	WorktreeDir  string
	Setup        string
	Timeout      time.Duration
	ApprovalMode string
	// Projects are the workspace's own repository first, then the
	// projects section's.
	Projects []Project
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

// ConfigOf is the workspace's fleet settings (from ws.Config: the file is
// read once per workspace), defaults filled in. The workspace's own
// repository is always a project, named after its folder.
func ConfigOf(ws *workspace.Workspace) (Config, error) {
	wc, err := ws.Config()
	if err != nil {
		return Config{}, err
	}
	fc, err := wc.Fleet()
	if err != nil {
		return Config{}, err
	}
	c := Config{Backend: fc.Backend, CLI: fc.CLI, Role: fc.Role, BranchPrefix: fc.BranchPrefix, WorktreeDir: fc.WorktreeDir,
		Setup: fc.Setup, Timeout: fc.Timeout, ApprovalMode: fc.ApprovalMode}
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
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	self := filepath.Base(ws.Root)
	c.Projects = []Project{{Name: self, DisplayName: self, Description: "this repository", Path: ws.Root, Backend: BackendLocal}}
	for _, p := range fc.Projects {
		pr := Project{Name: p.Name, DisplayName: p.DisplayName, Description: p.Description, Path: p.Path, BaseBranch: p.BaseBranch, Backend: p.Backend}
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

// Project finds a project by name (case-insensitive).
func (c Config) Project(name string) (Project, error) {
	names := make([]string, 0, len(c.Projects))
	for _, p := range c.Projects {
		if strings.EqualFold(p.Name, name) {
			return p, nil
		}
		names = append(names, p.Name)
	}
	return Project{}, agenterr.NotFoundf("project", "no project %q: the projects are %s", name, strings.Join(names, ", "))
}

// Base is the project's base branch (BaseBranch), else the branch checked out there.
func (p Project) Base() (string, error) {
	if p.BaseBranch != "" {
		return p.BaseBranch, nil
	}
	out, err := exec.Command("git", "-C", p.Path, "symbolic-ref", "--short", "-q", "HEAD").Output()
	if b := strings.TrimSpace(string(out)); err == nil && b != "" {
		return b, nil
	}
	return "HEAD", nil
}

// WorktreePath is where the agent's worktree goes: outside the repository
// by default, next to it in {repo}-agents/.
func (c Config) WorktreePath(p Project, name string) string {
	dir := c.WorktreeDir
	if dir == "" {
		dir = "../{repo}-agents"
	}
	dir = strings.ReplaceAll(dir, "{repo}", filepath.Base(p.Path))
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(p.Path, dir)
	}
	return filepath.Join(filepath.Clean(dir), Key(name))
}

// RolesFrom is the workspace whose agent modes are the project's roles: the
// project's own .agent/agents/ when it has one, else the fleet's (a project
// without modes of its own shares them).
func (p Project) RolesFrom(fleetWS *workspace.Workspace) *workspace.Workspace {
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
