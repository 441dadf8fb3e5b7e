package coder

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// SessionTokenHeader carries the token on every request.
const SessionTokenHeader = "Coder-Session-Token"

// maxBody bounds a response body: a workspace with its agents, apps and
// scripts is ~50 KB, so this leaves room for hundreds.
const maxBody = 64 << 20

// Client talks to one Coder deployment as one user. It is safe for
// concurrent use.
type Client struct {
	appHostMu sync.Mutex
	appHost   *string // the wildcard app host once fetched

	base    *url.URL
	token   string
	timeout time.Duration
	http    *http.Client
}

// New returns a client for cfg.
func New(cfg Config) (*Client, error) {
	base, err := parseBaseURL(cfg.URL)
	if err != nil {
		return nil, err
	}
	if cfg.Token == "" {
		return nil, &Error{Kind: KindUnauthorized, Msg: "no Coder session token: set " + EnvToken}
	}
	hc := &http.Client{}
	if cfg.HTTPClient != nil {
		copied := *cfg.HTTPClient
		hc = &copied
	}
	// A redirect is an answer to report (303 to /login), never to follow:
	// following it would send the token to wherever Location points.
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Client{base: base, token: cfg.Token, timeout: timeout, http: hc}, nil
}

// URL returns the deployment's access URL.
func (c *Client) URL() string { return c.base.String() }

// apiURL joins the base URL and path segments, each escaped.
func (c *Client) apiURL(query url.Values, segments ...string) *url.URL {
	u := *c.base
	var b strings.Builder
	b.WriteString(strings.TrimRight(c.base.EscapedPath(), "/"))
	for _, s := range segments {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(s))
	}
	setEscapedPath(&u, b.String())
	u.RawQuery = query.Encode()
	return &u
}

// setEscapedPath sets u's path from its escaped form so that an escaped
// "/" or "." in a name stays escaped on the wire.
func setEscapedPath(u *url.URL, escaped string) {
	p, err := url.PathUnescape(escaped)
	if err != nil { // cannot happen: every segment went through PathEscape
		p = escaped
	}
	u.Path, u.RawPath = p, escaped
}

// do sends one request and decodes a 2xx answer into out (nil to discard).
func (c *Client) do(ctx context.Context, method string, u *url.URL, in, out any) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	shown := u.Redacted()
	var body io.Reader
	if in != nil {
		buf, err := json.Marshal(in)
		if err != nil {
			return &Error{Kind: KindUnexpected, Method: method, URL: shown, Msg: "cannot encode the request", Err: err}
		}
		body = bytes.NewReader(buf)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return &Error{Kind: KindUnexpected, Method: method, URL: shown, Msg: "cannot build the request", Err: err}
	}
	req.Header.Set(SessionTokenHeader, c.token)
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		what := "cannot reach Coder at " + shown
		if errors.Is(err, context.DeadlineExceeded) {
			what = fmt.Sprintf("Coder did not answer %s %s within %s", method, shown, c.timeout)
		}
		return &Error{Kind: KindUnavailable, Method: method, URL: shown,
			Msg: what + "; check CODER_URL, the network and that the deployment is up (`coder ping`)", Err: err}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return &Error{Kind: KindUnavailable, Method: method, URL: shown, Status: resp.StatusCode,
			Msg: "the answer of Coder at " + shown + " broke off; check the network and try again", Err: err}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		var r *Response
		if strings.Contains(resp.Header.Get("Content-Type"), "json") {
			r = parseErrorBody(raw)
		}
		return statusError(method, shown, resp.StatusCode, r, resp.Header.Get("Location"))
	}
	if out == nil || len(bytes.TrimSpace(raw)) == 0 && resp.StatusCode == http.StatusNoContent {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return &Error{Kind: KindUnexpected, Method: method, URL: shown, Status: resp.StatusCode,
			Msg: "cannot read the answer of Coder at " + shown + "; check CODER_URL points at a Coder deployment", Err: err}
	}
	return nil
}

// MyOrganizations lists the organizations the user belongs to
// (GET /api/v2/users/me/organizations).
func (c *Client) MyOrganizations(ctx context.Context) ([]Organization, error) {
	var out []Organization
	err := c.do(ctx, http.MethodGet, c.apiURL(nil, "api", "v2", "users", "me", "organizations"), nil, &out)
	return out, err
}

// ListTemplates lists the templates the user can use (GET /api/v2/templates).
func (c *Client) ListTemplates(ctx context.Context) ([]Template, error) {
	var out []Template
	err := c.do(ctx, http.MethodGet, c.apiURL(nil, "api", "v2", "templates"), nil, &out)
	return out, err
}

// TemplateVersionPresets lists a template version's presets, in Coder's order.
func (c *Client) TemplateVersionPresets(ctx context.Context, versionID string) ([]Preset, error) {
	if versionID == "" {
		return nil, invalid("template_version_id", "no template version ID given")
	}
	var out []Preset
	err := c.do(ctx, http.MethodGet, c.apiURL(nil, "api", "v2", "templateversions", versionID, "presets"), nil, &out)
	return out, err
}

// TemplateVersionRichParameters lists a template version's parameters.
func (c *Client) TemplateVersionRichParameters(ctx context.Context, versionID string) ([]TemplateVersionParameter, error) {
	if versionID == "" {
		return nil, invalid("template_version_id", "no template version ID given")
	}
	var out []TemplateVersionParameter
	err := c.do(ctx, http.MethodGet, c.apiURL(nil, "api", "v2", "templateversions", versionID, "rich-parameters"), nil, &out)
	return out, err
}

// ListWorkspaces lists the user's own workspaces matching q (Coder's search
// syntax: "template:web name:papi"). The query always starts with
// owner:me: an admin's token would otherwise list everyone's workspaces.
func (c *Client) ListWorkspaces(ctx context.Context, q string) (WorkspacesResponse, error) {
	query := "owner:me"
	for _, term := range strings.Fields(q) {
		if strings.HasPrefix(strings.ToLower(term), "owner:") {
			return WorkspacesResponse{}, invalid("q", "the workspace query %q names an owner: the fleet only lists the token user's own workspaces (owner:me)", q)
		}
	}
	if q = strings.TrimSpace(q); q != "" {
		query += " " + q
	}
	var out WorkspacesResponse
	err := c.do(ctx, http.MethodGet, c.apiURL(url.Values{"q": {query}}, "api", "v2", "workspaces"), nil, &out)
	return out, err
}

// WorkspaceByOwnerAndName returns the user's workspace called name
// (GET /api/v2/users/me/workspace/{name}); KindNotFound when there is none.
func (c *Client) WorkspaceByOwnerAndName(ctx context.Context, name string) (Workspace, error) {
	if name == "" {
		return Workspace{}, invalid("name", "no workspace name given")
	}
	var out Workspace
	err := c.do(ctx, http.MethodGet, c.apiURL(nil, "api", "v2", "users", "me", "workspace", name), nil, &out)
	return out, err
}

// Workspace returns a workspace by ID (a malformed ID answers KindInvalid,
// as Coder does, not KindNotFound).
func (c *Client) Workspace(ctx context.Context, id string) (Workspace, error) {
	if id == "" {
		return Workspace{}, invalid("workspace_id", "no workspace ID given")
	}
	var out Workspace
	err := c.do(ctx, http.MethodGet, c.apiURL(nil, "api", "v2", "workspaces", id), nil, &out)
	return out, err
}

// CreateWorkspace creates a workspace for the user in organization orgID.
// The name is checked with Coder's rule before anything is sent. Coder
// answers 201 with a pending build.
func (c *Client) CreateWorkspace(ctx context.Context, orgID string, req CreateWorkspaceRequest) (Workspace, error) {
	if err := ValidateWorkspaceName(req.Name); err != nil {
		return Workspace{}, err
	}
	if orgID == "" {
		return Workspace{}, invalid("organization_id", "no organization ID given")
	}
	if req.TemplateID == "" && req.TemplateVersionID == "" {
		return Workspace{}, invalid("template_id", "a workspace needs a template_id or a template_version_id")
	}
	var out Workspace
	err := c.do(ctx, http.MethodPost, c.apiURL(nil, "api", "v2", "organizations", orgID, "members", "me", "workspaces"), req, &out)
	return out, err
}

// CreateBuild starts a build of workspace workspaceID with transition
// start, stop or delete (POST /api/v2/workspaces/{id}/builds).
func (c *Client) CreateBuild(ctx context.Context, workspaceID, transition string) (WorkspaceBuild, error) {
	switch transition {
	case TransitionStart, TransitionStop, TransitionDelete:
	default:
		return WorkspaceBuild{}, invalid("transition", "build transition %q is none of start, stop, delete", transition)
	}
	if workspaceID == "" {
		return WorkspaceBuild{}, invalid("workspace_id", "no workspace ID given")
	}
	var out WorkspaceBuild
	err := c.do(ctx, http.MethodPost, c.apiURL(nil, "api", "v2", "workspaces", workspaceID, "builds"),
		CreateWorkspaceBuildRequest{Transition: transition}, &out)
	return out, err
}

// WorkspaceBuildParameters returns the parameter values of a build
// (GET /api/v2/workspacebuilds/{id}/parameters): every parameter of its
// template version, as the build resolved it.
func (c *Client) WorkspaceBuildParameters(ctx context.Context, buildID string) ([]WorkspaceBuildParameter, error) {
	if buildID == "" {
		return nil, invalid("workspace_build_id", "no workspace build ID given")
	}
	var out []WorkspaceBuildParameter
	err := c.do(ctx, http.MethodGet, c.apiURL(nil, "api", "v2", "workspacebuilds", buildID, "parameters"), nil, &out)
	return out, err
}

// AppHost returns the deployment's wildcard host for subdomain apps
// (GET /api/v2/applications/host), "" when it has none.
func (c *Client) AppHost(ctx context.Context) (string, error) {
	var out AppHostResponse
	err := c.do(ctx, http.MethodGet, c.apiURL(nil, "api", "v2", "applications", "host"), nil, &out)
	return out.Host, err
}

func urlPathEscape(s string) string { return url.PathEscape(s) }

func parseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, &Error{Kind: KindUnexpected, Msg: "cannot parse the URL " + raw, Err: err}
	}
	return u, nil
}

// parseErrorBody reads Coder's error body, or the RFC 9457 problem body
// the AgentAPI (huma) answers with behind the app proxy.
func parseErrorBody(raw []byte) *Response {
	var body struct {
		Response
		Title string `json:"title"`
	}
	if json.Unmarshal(raw, &body) != nil {
		return nil
	}
	r := body.Response
	if r.Message == "" {
		r.Message = body.Title
	}
	if r.Message == "" && r.Detail == "" && len(r.Validations) == 0 {
		return nil
	}
	return &r
}
