package coder

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/fleet"
	"github.com/agentinfra/agentinfra/fleet/metadata"
	"github.com/agentinfra/agentinfra/workspace"
)

// Backend is the fleet on a Coder deployment: one workspace an agent
// (docs/fleet.md, "The Coder backend"). Coder is the truth about agents;
// the backend keeps only what Coder cannot hold, under
// .agent/fleet/coder/: each agent's spec and role as created, and the runs
// agentinfra started (the history), with the local fleet's lock discipline.
type Backend struct {
	ws     *workspace.Workspace
	client *Client
	cfg    BackendConfig
	getenv func(string) string
	now    func() time.Time
	files  files

	// seen are the workspaces this backend read (by ID), so that
	// WithMetadata after List or Show asks Coder nothing again. A Backend
	// lives for one request (the MCP server opens one per call).
	seenMu sync.Mutex
	seen   map[string]Workspace
}

var _ fleet.Backend = (*Backend)(nil)

// BackendOptions say how to reach Coder.
type BackendOptions struct {
	// Config is the coder section of .agent/config.yaml (BackendConfigOf).
	Config BackendConfig
	// Getenv reads CODER_URL and CODER_SESSION_TOKEN, which win over
	// Config (nil = no environment).
	Getenv func(string) string
	// Now is the clock of the records (nil = time.Now).
	Now func() time.Time
	// HTTPClient and Timeout tune the client (see Config).
	HTTPClient *http.Client
	Timeout    time.Duration
}

// OpenBackend returns the Coder fleet of ws. A missing URL or token is a
// 503 that says what to set; nothing is asked of Coder yet.
func OpenBackend(ws *workspace.Workspace, o BackendOptions) (*Backend, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	cfg, err := ConfigFrom(getenv, o.Config.URL, o.Config.TokenFile)
	if err != nil {
		return nil, configError(err)
	}
	cfg.HTTPClient, cfg.Timeout = o.HTTPClient, o.Timeout
	c, err := New(cfg)
	if err != nil {
		return nil, configError(err)
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	bc := o.Config
	if bc.PromptParameter == "" {
		bc.PromptParameter = DefaultPromptParameter
	}
	if bc.AppSlug == "" {
		bc.AppSlug = DefaultAgentAPISlug
	}
	if bc.HostAppSlug == "" {
		bc.HostAppSlug = DefaultHostAppSlug
	}
	return &Backend{ws: ws, client: c, cfg: bc, getenv: getenv, now: func() time.Time { return now().UTC() },
		files: files{root: filepath.Join(ws.AgentDir(), "fleet", "coder")}}, nil
}

// Client returns the backend's Coder client.
func (b *Backend) Client() *Client { return b.client }

// configError renders a configuration the backend cannot start with: the
// backend is unavailable (503) until CODER_URL or the token is set right;
// the field names what to set.
func configError(err error) error {
	var ce *Error
	if !errors.As(err, &ce) {
		return err
	}
	field := ce.Field
	if ce.Kind == KindUnauthorized {
		field = EnvToken
	}
	return &agenterr.Error{Kind: agenterr.Unavailable, Field: field, Reason: "the coder fleet backend is not configured: " + ce.Msg}
}

// fleetError turns a client error into a fleet error with the same code
// (coder.Kind.Domain) and the fleet's name of the field at fault.
func fleetError(err error) error {
	var ce *Error
	if err == nil || !errors.As(err, &ce) {
		return err
	}
	field := ce.Field
	switch field {
	case "template_version_preset_id":
		field = "role"
	case "template_id", "template_version_id":
		field = "project"
	}
	// ce.Msg already says what happened and what to check; the cause below
	// it (a dial error, a timeout) is kept, ce itself would repeat ce.Msg.
	return &agenterr.Error{Kind: ce.Kind.Domain(), Field: field, Reason: ce.Msg, Err: ce.Err}
}

// Projects lists the templates as projects: name is the display name (the
// template's name when it has none).
func (b *Backend) Projects(ctx context.Context) ([]fleet.Project, error) {
	tmpls, err := b.templates(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]fleet.Project, 0, len(tmpls))
	for _, t := range tmpls {
		out = append(out, projectOf(t))
	}
	return out, nil
}

func projectOf(t Template) fleet.Project {
	name := t.DisplayName
	if name == "" {
		name = t.Name
	}
	return fleet.Project{Name: name, DisplayName: name, Description: t.Description, TemplateID: t.ID,
		TemplateName: t.Name, BaseBranch: "", Backend: fleet.BackendCoder}
}

// templates lists the templates of the configured organization (all when
// none is configured).
func (b *Backend) templates(ctx context.Context) ([]Template, error) {
	all, err := b.client.ListTemplates(ctx)
	if err != nil {
		return nil, fleetError(err)
	}
	if b.cfg.Organization == "" {
		return all, nil
	}
	var out []Template
	for _, t := range all {
		if strings.EqualFold(t.OrganizationName, b.cfg.Organization) || t.OrganizationID == b.cfg.Organization {
			out = append(out, t)
		}
	}
	return out, nil
}

// template finds a project's template by its name or template name, case
// insensitively; "" is the only template when there is exactly one. field
// is the input field named in errors.
func (b *Backend) template(ctx context.Context, project, field string) (Template, error) {
	tmpls, err := b.templates(ctx)
	if err != nil {
		return Template{}, err
	}
	names := make([]string, 0, len(tmpls))
	for _, t := range tmpls {
		p := projectOf(t)
		if project == "" && len(tmpls) == 1 || project != "" && (strings.EqualFold(p.Name, project) || strings.EqualFold(t.Name, project)) {
			return t, nil
		}
		names = append(names, p.Name)
	}
	if len(tmpls) == 0 {
		return Template{}, &agenterr.Error{Kind: agenterr.NotFound, Field: field, Reason: fmt.Sprintf(
			"Coder at %s has no template this user can use%s: a project is a template", b.client.URL(), b.orgNote())}
	}
	if project == "" {
		return Template{}, &agenterr.Error{Kind: agenterr.Invalid, Field: field, Reason: fmt.Sprintf(
			"name a project: Coder at %s has %d templates (%s)", b.client.URL(), len(tmpls), strings.Join(names, ", "))}
	}
	return Template{}, &agenterr.Error{Kind: agenterr.NotFound, Field: field, Reason: fmt.Sprintf(
		"no project %q: the projects (Coder templates) are %s", project, strings.Join(names, ", "))}
}

func (b *Backend) orgNote() string {
	if b.cfg.Organization == "" {
		return ""
	}
	return " in organization " + b.cfg.Organization + " (coder.organization)"
}

// Roles lists the presets of the project's template's active version, in
// Coder's order. A preset has a name only: display_name is the name, and
// description is the preset's own description, else the parameters it sets.
func (b *Backend) Roles(ctx context.Context, project string) ([]fleet.Role, error) {
	t, err := b.template(ctx, project, "project")
	if err != nil {
		return nil, err
	}
	presets, err := b.client.TemplateVersionPresets(ctx, t.ActiveVersionID)
	if err != nil {
		return nil, fleetError(err)
	}
	out := make([]fleet.Role, 0, len(presets))
	for _, p := range presets {
		out = append(out, roleOf(p))
	}
	return out, nil
}

func roleOf(p Preset) fleet.Role {
	desc := p.Description
	if desc == "" {
		var names []string
		for _, pp := range p.Parameters {
			names = append(names, pp.Name)
		}
		desc = "Coder preset"
		if len(names) > 0 {
			desc += " setting " + strings.Join(names, ", ")
		}
	}
	if p.Default {
		desc += " (the template's default)"
	}
	return fleet.Role{Name: p.Name, DisplayName: p.Name, Description: desc}
}

// WithMetadata fills every agent's metadata from its workspace
// (CollectMetadata: Coder's agent metadata, else the metadata app), the
// workspaces read in parallel; an agent whose workspace is gone has none.
func (b *Backend) WithMetadata(ctx context.Context, agents []fleet.Agent, scope metadata.Scope) {
	wss := make([]Workspace, 0, len(agents))
	idx := make([]int, 0, len(agents))
	for i := range agents {
		agents[i].SetMetadata(metadata.Metadata{})
		ws, ok := b.workspaceOf(ctx, agents[i])
		if !ok {
			continue
		}
		wss = append(wss, ws)
		idx = append(idx, i)
	}
	for j, md := range b.client.CollectMetadataAll(ctx, wss, MetadataOptions{Scope: scope}) {
		agents[idx[j]].SetMetadata(md)
	}
}

// remember keeps a workspace read from Coder for WithMetadata.
func (b *Backend) remember(ws Workspace) {
	b.seenMu.Lock()
	defer b.seenMu.Unlock()
	if b.seen == nil {
		b.seen = map[string]Workspace{}
	}
	b.seen[ws.ID] = ws
}

// workspaceOf is the workspace of an agent: the one read with it, else
// read again (an agent built by hand).
func (b *Backend) workspaceOf(ctx context.Context, a fleet.Agent) (Workspace, bool) {
	b.seenMu.Lock()
	ws, ok := b.seen[a.Workspace.ID]
	b.seenMu.Unlock()
	if ok {
		return ws, true
	}
	ws, err := b.client.WorkspaceByOwnerAndName(ctx, a.Name)
	return ws, err == nil
}

// checkName applies Coder's own name rule (ValidateWorkspaceName), not the
// local fleet's: Coder allows 1–32 characters where a local agent has 20,
// and every workspace list shows must be reachable by show, start, stop,
// history and delete (the metadata contract's names are 1–32 too). The
// characters are the fleet's (letters, digits, single hyphens), so a name
// never leaves the backend's folder; new and create are Coder routes.
func checkName(name, field string) error {
	if err := ValidateWorkspaceName(name); err != nil {
		var ce *Error
		errors.As(err, &ce)
		return &agenterr.Error{Kind: agenterr.Invalid, Field: field, Reason: ce.Msg}
	}
	return nil
}
