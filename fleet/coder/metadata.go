package coder

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/fleet/metadata"
)

// DefaultMetadataAppSlug is the slug of the workspace app that serves
// `agentinfra metadata serve` inside a workspace.
const DefaultMetadataAppSlug = "agentinfra-metadata"

// DefaultMetadataTimeout bounds one workspace's metadata: the app inside
// the workspace runs its fields concurrently, each within metadata's
// DefaultTimeout (5 s), so 8 s leaves room for the proxy.
const DefaultMetadataTimeout = 8 * time.Second

// MetadataOptions tune CollectMetadata; the zero value is the defaults.
type MetadataOptions struct {
	// AppSlug is the slug of the metadata app (DefaultMetadataAppSlug when "").
	AppSlug string
	// Timeout bounds the whole collection of one workspace
	// (DefaultMetadataTimeout when zero).
	Timeout time.Duration
	// Concurrency bounds the workspaces CollectMetadataAll reads at once
	// (metadata.DefaultAgentConcurrency when zero).
	Concurrency int
	// Scope is which fields the metadata app runs (Coder's own agent
	// metadata is collected by Coder: all of it comes).
	Scope metadata.Scope
}

func (o MetadataOptions) withDefaults() MetadataOptions {
	if o.AppSlug == "" {
		o.AppSlug = DefaultMetadataAppSlug
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultMetadataTimeout
	}
	if o.Concurrency <= 0 {
		o.Concurrency = metadata.DefaultAgentConcurrency
	}
	return o
}

// WorkspaceAgentMetadata is one item of Coder's agent metadata (a template's
// `coder_agent { metadata { ... } }` block) with its latest result, as
// GET /api/v2/workspaceagents/{id}/watch-metadata sends it.
type WorkspaceAgentMetadata struct {
	Result      WorkspaceAgentMetadataResult      `json:"result"`
	Description WorkspaceAgentMetadataDescription `json:"description"`
}

// WorkspaceAgentMetadataResult is the latest run of a metadata script.
type WorkspaceAgentMetadataResult struct {
	// CollectedAt is the zero time (0001-01-01) until the agent first ran
	// the script.
	CollectedAt time.Time `json:"collected_at"`
	// Age is the result's age in seconds.
	Age   int64  `json:"age"`
	Value string `json:"value"`
	Error string `json:"error"`
}

// WorkspaceAgentMetadataDescription is the template's metadata block.
type WorkspaceAgentMetadataDescription struct {
	DisplayName string `json:"display_name"`
	Key         string `json:"key"`
	Script      string `json:"script"`
	// Interval and Timeout are in seconds.
	Interval int64 `json:"interval"`
	Timeout  int64 `json:"timeout"`
}

// WatchAgentMetadata reads the first set of agent metadata Coder sends on
// GET /api/v2/workspaceagents/{agentID}/watch-metadata (server-sent
// events: pings, then `data` events each carrying the whole list) and
// closes the stream. An agent whose template defines no metadata answers
// an empty list.
func (c *Client) WatchAgentMetadata(ctx context.Context, agentID string) ([]WorkspaceAgentMetadata, error) {
	if agentID == "" {
		return nil, invalid("agent_id", "no workspace agent ID given")
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	u := c.apiURL(nil, "api", "v2", "workspaceagents", agentID, "watch-metadata")
	shown := u.Redacted()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, &Error{Kind: KindUnexpected, Method: http.MethodGet, URL: shown, Msg: "cannot build the request", Err: err}
	}
	req.Header.Set(SessionTokenHeader, c.token)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, unreachableError(http.MethodGet, shown, c.timeout, err)
	}
	defer resp.Body.Close() // closing ends the stream: one event is all we need
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		var r *Response
		if strings.Contains(resp.Header.Get("Content-Type"), "json") {
			r = parseErrorBody(raw)
		}
		return nil, statusError(http.MethodGet, shown, resp.StatusCode, r, resp.Header.Get("Location"))
	}
	typ, data, err := nextDataEvent(bufio.NewReader(io.LimitReader(resp.Body, maxBody)))
	if err != nil {
		if ctx.Err() != nil {
			return nil, unreachableError(http.MethodGet, shown, c.timeout, ctx.Err())
		}
		return nil, &Error{Kind: KindUnavailable, Method: http.MethodGet, URL: shown, Status: resp.StatusCode,
			Msg: "the metadata stream of Coder at " + shown + " ended before its first event", Err: err}
	}
	if typ == "error" {
		r := parseErrorBody(data)
		msg := "Coder sent an error on " + shown
		if r != nil {
			msg += ": " + r.Message
		}
		return nil, &Error{Kind: KindUnavailable, Method: http.MethodGet, URL: shown, Status: resp.StatusCode, Response: r, Msg: msg}
	}
	var out []WorkspaceAgentMetadata
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, &Error{Kind: KindUnexpected, Method: http.MethodGet, URL: shown, Status: resp.StatusCode,
			Msg: "cannot read the agent metadata Coder at " + shown + " sent", Err: err}
	}
	return out, nil
}

// nextDataEvent reads server-sent events until one that is not a ping
// and returns its type ("data" or "error") and its data lines joined.
func nextDataEvent(r *bufio.Reader) (string, []byte, error) {
	typ, data := "", []byte(nil)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return "", nil, err
		}
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0: // the event ends
			if typ != "" && typ != "ping" && data != nil {
				return typ, data, nil
			}
			typ, data = "", nil
		case bytes.HasPrefix(line, []byte("event:")):
			typ = string(bytes.TrimSpace(line[len("event:"):]))
		case bytes.HasPrefix(line, []byte("data:")):
			if data != nil {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(line[len("data:"):], []byte(" "))...)
		}
	}
}

func unreachableError(method, shown string, timeout time.Duration, err error) *Error {
	what := "cannot reach Coder at " + shown
	if errors.Is(err, context.DeadlineExceeded) {
		what = fmt.Sprintf("Coder did not answer %s %s within %s", method, shown, timeout)
	}
	return &Error{Kind: KindUnavailable, Method: method, URL: shown,
		Msg: what + "; check CODER_URL, the network and that the deployment is up (`coder ping`)", Err: err}
}

// CollectMetadata reads the workspace metadata of ws, within o.Timeout.
// It prefers Coder's own agent metadata (the template's coder_agent
// metadata blocks) and otherwise asks the metadata app (`agentinfra
// metadata serve` behind the app proxy, slug o.AppSlug). A workspace with
// neither, or not started, has no metadata and no error. It never fails:
// what cannot be read is the result's Err or a field's error.
//
// Every Coder agent metadata item is an include_in_list field: Coder
// itself shows all of them on the workspace's agent row. A template that
// wants to choose serves the app instead (meta.include_in_list per task).
func (c *Client) CollectMetadata(ctx context.Context, ws Workspace, o MetadataOptions) metadata.Metadata {
	o = o.withDefaults()
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	agent, ok := firstAgent(ws)
	if !ok {
		return noMetadata()
	}
	if agent.Status != AgentConnected {
		return metadataFailed(fmt.Sprintf("not collected: the workspace agent %q is %s", agent.Name, orUnknown(agent.Status)))
	}
	var waiting string // what the collection waits for
	md := c.collectMetadata(ctx, ws, agent, o, &waiting)
	if md.Err != "" && ctx.Err() != nil {
		// The request's own error would name the client's timeout, not ours.
		md.Err = fmt.Sprintf("not collected within %s: %s did not answer in time; check the workspace (`coder ssh %s`)",
			o.Timeout, waiting, ws.Name)
	}
	return md
}

func (c *Client) collectMetadata(ctx context.Context, ws Workspace, agent WorkspaceAgent, o MetadataOptions, waiting *string) metadata.Metadata {
	*waiting = "Coder's agent metadata stream"
	items, watchErr := c.WatchAgentMetadata(ctx, agent.ID)
	if watchErr == nil && len(items) > 0 {
		return fromAgentMetadata(items)
	}
	if KindOf(watchErr) == KindNotFound {
		watchErr = nil // a Coder without the endpoint: no agent metadata
	}
	app, _, hasApp := FindApp(ws, o.AppSlug)
	switch {
	case hasApp:
		*waiting = "the metadata app " + app.Slug
		md, err := c.metadataApp(ctx, app, o.Scope)
		if err != nil {
			msg := "metadata app " + app.Slug + ": " + err.Error()
			if watchErr != nil {
				msg = "agent metadata: " + watchErr.Error() + "; " + msg
			}
			return metadataFailed(msg)
		}
		return md
	case watchErr != nil:
		return metadataFailed("agent metadata: " + watchErr.Error())
	default:
		return noMetadata()
	}
}

// CollectMetadataAll collects the metadata of wss in parallel (at most
// o.Concurrency at once); out[i] is wss[i]'s.
func (c *Client) CollectMetadataAll(ctx context.Context, wss []Workspace, o MetadataOptions) []metadata.Metadata {
	o = o.withDefaults()
	return metadata.CollectEach(ctx, wss, o.Concurrency, func(ctx context.Context, ws Workspace) metadata.Metadata {
		return c.CollectMetadata(ctx, ws, o)
	})
}

// metadataApp fetches the metadata app's JSON (metadata.Handler's).
func (c *Client) metadataApp(ctx context.Context, app App, scope metadata.Scope) (metadata.Metadata, error) {
	u, err := c.appEndpoint(ctx, app, "")
	if err != nil {
		return metadata.Metadata{}, err
	}
	if scope == metadata.ListFields {
		u.RawQuery = "fields=list"
	}
	var md metadata.Metadata
	if err := c.do(ctx, http.MethodGet, u, nil, &md); err != nil {
		return metadata.Metadata{}, err
	}
	return tidy(md), nil
}

// tidy makes an app's answer consistent: every name has a field, every
// field a name (those the app forgot to order come last, sorted).
func tidy(md metadata.Metadata) metadata.Metadata {
	fields := md.FieldsOrEmpty()
	names := make([]string, 0, len(fields))
	seen := map[string]bool{}
	for _, n := range md.Names {
		if _, ok := fields[n]; ok && !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	var rest []string
	for n := range fields {
		if !seen[n] {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	md.Fields, md.Names = fields, append(names, rest...)
	return md
}

// fromAgentMetadata maps Coder's agent metadata: key → field,
// display_name → description, every item listed.
func fromAgentMetadata(items []WorkspaceAgentMetadata) metadata.Metadata {
	md := metadata.Metadata{Fields: map[string]metadata.Field{}, Names: []string{}}
	for _, it := range items {
		key := it.Description.Key
		if _, dup := md.Fields[key]; dup || key == "" {
			continue
		}
		desc := it.Description.DisplayName
		if desc == "" {
			desc = "No description"
		}
		f := metadata.Field{Schema: metadata.Schema{Description: desc, IncludeInList: true}}
		switch {
		case it.Result.Error != "":
			f.Error = metadataString(it.Result.Error)
		case it.Result.CollectedAt.Year() <= 1:
			f.Error = metadataString("not collected yet: the Coder agent has not run this metadata script")
		default:
			v := strings.TrimSpace(it.Result.Value)
			if len(v) > metadata.DefaultMaxValueBytes {
				v = strings.ToValidUTF8(v[:metadata.DefaultMaxValueBytes], "")
				f.Error = metadataString(fmt.Sprintf("value cut to %d bytes", metadata.DefaultMaxValueBytes))
			}
			if v != "" {
				f.Value = &v
			}
		}
		md.Fields[key] = f
		md.Names = append(md.Names, key)
	}
	return md
}

// firstAgent is the workspace's first agent (the fleet's workspaces have
// one; Coder names it "main" in its templates).
func firstAgent(ws Workspace) (WorkspaceAgent, bool) {
	for _, r := range ws.LatestBuild.Resources {
		for _, ag := range r.Agents {
			return ag, true
		}
	}
	return WorkspaceAgent{}, false
}

func noMetadata() metadata.Metadata {
	return metadata.Metadata{Fields: map[string]metadata.Field{}, Names: []string{}}
}

func metadataFailed(msg string) metadata.Metadata {
	md := noMetadata()
	md.Err = msg
	return md
}

func orUnknown(s string) string {
	if s == "" {
		return "in an unknown state"
	}
	return s
}

func metadataString(s string) *string { return &s }
