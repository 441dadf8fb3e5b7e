package config

import (
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Models is the models section:
//
//	models:
//	  fast: gemini-2.5-flash   # model of the fast tier (the environment wins)
//	  deep: gemini-2.5-pro     # model of the deep tier (the environment wins)
//	  modes:                   # per-mode override of the difficulty rule
//	    coder: deep            # a tier (fast|deep) or a model name
type Models struct {
	Fast  string            `json:"fast"`
	Deep  string            `json:"deep"`
	Modes map[string]string `json:"modes"`
}

func (d decoder) models(n *yaml.Node) (Models, error) {
	var m Models
	err := d.mapping(n, "models", []string{"fast", "deep", "modes"}, func(key string, _, v *yaml.Node) error {
		var err error
		switch key {
		case "fast":
			m.Fast, err = d.word(v, "models.fast", "gemini-2.5-flash")
		case "deep":
			m.Deep, err = d.word(v, "models.deep", "gemini-2.5-pro")
		case "modes":
			if v.Kind != yaml.MappingNode {
				return d.bad(v, "models.modes", "must map modes to a tier or a model, e.g. {coder: deep}")
			}
			m.Modes = map[string]string{}
			for i := 0; i+1 < len(v.Content); i += 2 {
				mk, mv := v.Content[i], v.Content[i+1]
				w, err := d.word(mv, "models.modes."+mk.Value, "fast, deep or a model name")
				if err != nil {
					return err
				}
				m.Modes[mk.Value] = w
			}
		}
		return err
	})
	return m, err
}

// Fleet is the fleet section, and the projects section in Projects:
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
//
// Values are as written ("" when not set); package fleet fills the defaults.
type Fleet struct {
	Backend      string
	CLI          string
	Role         string
	BranchPrefix string
	WorktreeDir  string
	Setup        string
	// Timeout is 0 when not set.
	Timeout      time.Duration
	ApprovalMode string
	Projects     []Project
}

// Project is one entry of the projects section; Path is absolute (the
// workspace root when not set).
type Project struct {
	Name, DisplayName, Description, Path, BaseBranch, Backend string
}

var fleetKeys = []string{"backend", "cli", "role", "branch_prefix", "worktree_dir", "setup", "timeout", "approval_mode"}

func (d decoder) fleet(n *yaml.Node) (Fleet, error) {
	var f Fleet
	err := d.mapping(n, "fleet", fleetKeys, func(key string, _, v *yaml.Node) error {
		w, err := d.word(v, "fleet."+key, fleetExample[key])
		if err != nil {
			return err
		}
		switch key {
		case "backend":
			f.Backend = w
		case "cli":
			f.CLI = w
		case "role":
			f.Role = w
		case "branch_prefix":
			f.BranchPrefix = w
		case "worktree_dir":
			f.WorktreeDir = w
		case "setup":
			f.Setup = w
		case "approval_mode":
			f.ApprovalMode = w
		case "timeout":
			t, err := time.ParseDuration(w)
			if err != nil || t <= 0 {
				return d.badValue(v, "fleet.timeout", "use a duration such as 30m")
			}
			f.Timeout = t
		}
		return nil
	})
	return f, err
}

var fleetExample = map[string]string{
	"backend": "local", "cli": "gemini", "role": "coder", "branch_prefix": "agent/", "worktree_dir": "../{repo}-agents",
	"setup": "npm ci", "timeout": "30m", "approval_mode": "yolo",
}

var projectKeys = []string{"name", "display_name", "description", "path", "base_branch", "backend"}

func (d decoder) projects(n *yaml.Node, root string) ([]Project, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, d.bad(n, "projects", "must be a list of {name, path, ...}")
	}
	out := make([]Project, 0, len(n.Content))
	for i, item := range n.Content {
		section := "projects[" + strconv.Itoa(i) + "]"
		var p Project
		err := d.mapping(item, section, projectKeys, func(key string, _, v *yaml.Node) error {
			w, err := d.word(v, section+"."+key, "web")
			switch key {
			case "name":
				p.Name = w
			case "display_name":
				p.DisplayName = w
			case "description":
				p.Description = w
			case "path":
				p.Path = w
			case "base_branch":
				p.BaseBranch = w
			case "backend":
				p.Backend = w
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		if p.Name == "" {
			return nil, d.bad(item, section+".name", "a project needs a name")
		}
		switch {
		case p.Path == "":
			p.Path = root
		case !filepath.IsAbs(p.Path):
			p.Path = filepath.Join(root, p.Path)
		}
		p.Path = filepath.Clean(p.Path)
		out = append(out, p)
	}
	return out, nil
}

// Coder is the coder section:
//
//	coder:
//	  url: https://coder.example.com     # CODER_URL wins
//	  token_file: ~/.config/coderv2/session  # CODER_SESSION_TOKEN wins; mode 0600
//	  prompt_parameter: AI Prompt         # the template parameter that takes the spec
//	  app_slug: ccw                       # the AgentAPI app's slug
//	  organization: coder                 # only this organization's templates (name or ID)
//
// Values are as written, except TokenFile: absolute (relative to the
// workspace root; ~/ is $HOME). Package fleet/coder fills the defaults.
type Coder struct {
	URL             string
	TokenFile       string
	PromptParameter string
	AppSlug         string
	Organization    string
}

var coderKeys = []string{"url", "token_file", "prompt_parameter", "app_slug", "organization"}

func (d decoder) coder(n *yaml.Node, root string, getenv func(string) string) (Coder, error) {
	var c Coder
	err := d.mapping(n, "coder", coderKeys, func(key string, _, v *yaml.Node) error {
		w, err := d.word(v, "coder."+key, coderExample[key])
		switch key {
		case "url":
			c.URL = w
		case "token_file":
			c.TokenFile = w
		case "prompt_parameter":
			c.PromptParameter = w
		case "app_slug":
			c.AppSlug = w
		case "organization":
			c.Organization = w
		}
		return err
	})
	if t := c.TokenFile; t != "" {
		if rest, ok := strings.CutPrefix(t, "~/"); ok && getenv("HOME") != "" {
			t = filepath.Join(getenv("HOME"), rest)
		} else if !filepath.IsAbs(t) {
			t = filepath.Join(root, t)
		}
		c.TokenFile = t
	}
	return c, err
}

var coderExample = map[string]string{
	"url": "https://coder.example.com", "token_file": "~/.config/coderv2/session", "prompt_parameter": "AI Prompt",
	"app_slug": "ccw", "organization": "coder",
}
