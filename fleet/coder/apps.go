package coder

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// DefaultAgentAPISlug is the slug of the AgentAPI app in Coder's Claude
// Code module ("ccw" in the recorded workspaces is a custom one).
const DefaultAgentAPISlug = "ccw"

// App addresses one app of a workspace's agent.
type App struct {
	Owner     string // the workspace owner's username
	Workspace string
	Agent     string // the Coder agent's name ("main")
	Slug      string
	// Subdomain apps live at their own host under the deployment's wildcard
	// app host; path apps under /@{owner}/{workspace}.{agent}/apps/{slug}/.
	Subdomain bool
	// SubdomainName is the host label Coder gives a subdomain app, when the
	// workspace response carried it.
	SubdomainName string
}

// FindApp finds the app with slug among ws's agents.
func FindApp(ws Workspace, slug string) (App, WorkspaceAgent, bool) {
	for _, r := range ws.LatestBuild.Resources {
		for _, ag := range r.Agents {
			for _, a := range ag.Apps {
				if a.Slug == slug {
					return App{Owner: ws.OwnerName, Workspace: ws.Name, Agent: ag.Name, Slug: a.Slug,
						Subdomain: a.Subdomain, SubdomainName: a.SubdomainName}, ag, true
				}
			}
		}
	}
	return App{}, WorkspaceAgent{}, false
}

// AppURL returns the URL of endpoint ("status", "message", ...) of app.
// appHost is the wildcard app host (AppHost), needed for subdomain apps.
func (c *Client) AppURL(app App, appHost, endpoint string) (string, error) {
	if app.Owner == "" || app.Workspace == "" || app.Agent == "" || app.Slug == "" {
		return "", invalid("app", "an app needs its owner, workspace, agent and slug (got %+v)", app)
	}
	endpoint = strings.TrimLeft(endpoint, "/")
	if !app.Subdomain {
		// /@{owner}/{workspace}.{agent}/apps/{slug}/{endpoint}, each name
		// escaped on its own.
		u := *c.base
		escaped := strings.TrimRight(c.base.EscapedPath(), "/") +
			"/@" + pathEscape(app.Owner) + "/" + pathEscape(app.Workspace) + "." + pathEscape(app.Agent) +
			"/apps/" + pathEscape(app.Slug) + "/" + endpoint
		setEscapedPath(&u, escaped)
		u.RawQuery = ""
		return u.String(), nil
	}
	if appHost == "" {
		return "", &Error{Kind: KindUnavailable, Msg: fmt.Sprintf(
			"app %q of %s is a subdomain app but Coder at %s has no wildcard app host; "+
				"set CODER_WILDCARD_ACCESS_URL on the deployment or make the app a path app (subdomain = false)",
			app.Slug, app.Workspace, c.base)}
	}
	if !strings.HasPrefix(appHost, "*") {
		return "", &Error{Kind: KindUnexpected, Msg: fmt.Sprintf("Coder's app host %q has no leading *", appHost)}
	}
	label := app.SubdomainName
	if label == "" {
		// Coder's subdomain app label: {slug}--{agent}--{workspace}--{owner}.
		for _, part := range []string{app.Slug, app.Agent, app.Workspace, app.Owner} {
			if !isHostLabelPart(part) {
				return "", invalid("app", "%q cannot be part of a host name, so the subdomain app %q cannot be addressed", part, app.Slug)
			}
		}
		label = strings.Join([]string{app.Slug, app.Agent, app.Workspace, app.Owner}, "--")
	} else if !isHostLabelPart(label) {
		return "", invalid("app", "Coder's subdomain name %q is not a host label", label)
	}
	// Host names are case-insensitive; Coder matches the label in lower case.
	host := strings.ToLower(label) + appHost[1:]
	return c.base.Scheme + "://" + host + "/" + endpoint, nil
}

// pathEscape escapes a name for one path segment; '.' stays as it is, and
// Coder names cannot hold one, but '@', '/', '%' and spaces are escaped.
func pathEscape(s string) string {
	return strings.ReplaceAll(urlPathEscape(s), "@", "%40")
}

func isHostLabelPart(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

// appHostCached returns the wildcard app host, asking Coder once.
func (c *Client) appHostCached(ctx context.Context) (string, error) {
	c.appHostMu.Lock()
	defer c.appHostMu.Unlock()
	if c.appHost != nil {
		return *c.appHost, nil
	}
	h, err := c.AppHost(ctx)
	if err != nil {
		return "", err
	}
	c.appHost = &h
	return h, nil
}

func (c *Client) appDo(ctx context.Context, app App, method, endpoint string, in, out any) error {
	u, err := c.appEndpoint(ctx, app, endpoint)
	if err != nil {
		return err
	}
	return c.do(ctx, method, u, in, out)
}

// appEndpoint is the URL of endpoint of app, asking Coder for the wildcard
// app host (once) when app is a subdomain app.
func (c *Client) appEndpoint(ctx context.Context, app App, endpoint string) (*url.URL, error) {
	host := ""
	if app.Subdomain {
		var err error
		if host, err = c.appHostCached(ctx); err != nil {
			return nil, err
		}
	}
	raw, err := c.AppURL(app, host, endpoint)
	if err != nil {
		return nil, err
	}
	return parseURL(raw)
}

// AgentStatus asks the AgentAPI app whether the agent works ("running") or
// waits ("stable").
func (c *Client) AgentStatus(ctx context.Context, app App) (AgentStatus, error) {
	var out AgentStatus
	err := c.appDo(ctx, app, http.MethodGet, "status", nil, &out)
	return out, err
}

// SendMessage sends msg to the agent through its AgentAPI app: a user
// message starts work; the raw Interrupt stops it.
func (c *Client) SendMessage(ctx context.Context, app App, msg AgentMessage) error {
	if msg.Type != MessageUser && msg.Type != MessageRaw {
		return invalid("type", "message type %q is neither %q nor %q", msg.Type, MessageUser, MessageRaw)
	}
	if msg.Content == "" {
		return invalid("content", "the message is empty")
	}
	var out AgentMessageResponse
	if err := c.appDo(ctx, app, http.MethodPost, "message", msg, &out); err != nil {
		return err
	}
	if !out.OK {
		return &Error{Kind: KindUnexpected, Msg: fmt.Sprintf("the AgentAPI app %q of %s did not accept the message", app.Slug, app.Workspace)}
	}
	return nil
}

// AgentMessages returns the agent's conversation, oldest first.
func (c *Client) AgentMessages(ctx context.Context, app App) ([]AgentConversationMessage, error) {
	var out AgentMessages
	err := c.appDo(ctx, app, http.MethodGet, "messages", nil, &out)
	return out.Messages, err
}

// AppRoot is how to reach app through Coder's proxy from outside the
// client: the URL of its root, the headers every request needs (the
// session token, which Coder takes and does not pass on) and the HTTP
// client to send them with (it follows no redirect: the proxy's redirect
// to its login page is an answer, not a place to send the tokens).
func (c *Client) AppRoot(ctx context.Context, app App) (string, http.Header, *http.Client, error) {
	u, err := c.appEndpoint(ctx, app, "")
	if err != nil {
		return "", nil, nil, err
	}
	return u.String(), http.Header{SessionTokenHeader: {c.token}}, c.http, nil
}
