package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/internal/sse"
	"github.com/agentinfra/agentinfra/supervision"
)

// Options make a Client.
type Options struct {
	// Name is the host's name (the Coder workspace's).
	Name string
	// URL is the root of the host's API: its app's URL through Coder's
	// proxy (path or subdomain app), or the host's own address. "" when
	// Locate finds it.
	URL string
	// Locate finds the host's URL (and Header, HTTPClient) when URL is ""
	// (its workspace was not up when this client was made): it is asked
	// before each request until it finds it, and the host counts as
	// unreachable until then.
	Locate func(context.Context) (Location, error)
	// Token is the host's token, sent as Authorization: Bearer.
	Token string
	// Header is sent with every request too: the person's Coder session
	// token (Coder-Session-Token), which Coder's proxy takes.
	Header http.Header
	// HTTPClient makes the requests (nil: one that follows no redirect:
	// Coder's proxy redirects a request it does not let through to its
	// login page, which is an answer, not a place to send the tokens).
	HTTPClient *http.Client
	// Timeout bounds one call (0: DefaultTimeout); the caller's context may
	// bound it more.
	Timeout time.Duration
	// Idle is how long an event stream may stay silent (the host pings it
	// every DefaultPing) before it counts as broken (0: 3 pings).
	Idle time.Duration
	// StateDir keeps since when the host could not be reached, for the
	// next process (a file per host); "" keeps it in memory only.
	StateDir string
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Location is where a host is found (Options.Locate).
type Location struct {
	URL        string
	Header     http.Header
	HTTPClient *http.Client
}

// DefaultTimeout bounds one call of a Client.
const DefaultTimeout = 10 * time.Second

// maxAnswer bounds an answer's body: a session's audit log with its
// requests' diffs.
const maxAnswer = 64 << 20

// maxEventLine bounds one line of the event stream (an audit event).
const maxEventLine = 8 << 20

// Client reaches one host: a supervision.Host. It is safe for concurrent
// use.
type Client struct {
	o     Options
	reach *reach

	mu   sync.Mutex
	base *url.URL // nil until Locate found it
}

var _ supervision.Host = (*Client)(nil)

// New returns a client of the host o describes; nothing is sent yet.
func New(o Options) (*Client, error) {
	if o.Name == "" {
		return nil, errors.New("a host needs its name")
	}
	var base *url.URL
	if o.URL != "" || o.Locate == nil {
		u, err := rootURL(o.Name, o.URL)
		if err != nil {
			return nil, err
		}
		base = u
	}
	if o.Token == "" {
		return nil, fmt.Errorf("host %s: no token: the host refuses every request without it", o.Name)
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Idle <= 0 {
		o.Idle = 3 * DefaultPing
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Client{o: o, base: base, reach: newReach(o.StateDir, o.Name, o.Now)}, nil
}

// rootURL is raw as the root of the host's API (ending in /).
func rootURL(name, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("host %s: %q is not an http(s) URL", name, raw)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
		if u.RawPath != "" {
			u.RawPath += "/"
		}
	}
	return u, nil
}

// located is the host's root, once known: Locate is asked while it is not
// (its answer is kept once it has one); until then the host is unreachable.
func (c *Client) located(ctx context.Context) (*url.URL, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.base != nil {
		return c.base, nil
	}
	loc, err := c.o.Locate(ctx)
	if err == nil {
		var u *url.URL
		if u, err = rootURL(c.o.Name, loc.URL); err == nil {
			c.base, c.o.Header = u, loc.Header
			if loc.HTTPClient != nil {
				c.o.HTTPClient = loc.HTTPClient
			}
			return u, nil
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return nil, c.unreachable("it is not found: "+err.Error(), err)
}

// Name is the host's name.
func (c *Client) Name() string { return c.o.Name }

// Down reports since when the host could not be reached, and why.
func (c *Client) Down() (time.Time, string) { return c.reach.state() }

// endpoint is the URL of path under the host's root.
func endpoint(base *url.URL, path string, q url.Values) string {
	u := *base
	ref := &url.URL{Path: path}
	if q != nil {
		ref.RawQuery = q.Encode()
	}
	return u.ResolveReference(ref).String()
}

func (c *Client) newRequest(ctx context.Context, method, u string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, err
	}
	for k, vs := range c.o.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("Authorization", "Bearer "+c.o.Token)
	return req, nil
}

// unreachable is the error of a host that did not answer (the network,
// Coder's proxy, the workspace): KindUnavailable, naming the host and
// since when.
func (c *Client) unreachable(what string, err error) error {
	c.reach.down(what)
	since, _ := c.reach.state()
	return &agenterr.Error{Kind: agenterr.Unavailable, Err: err, Reason: fmt.Sprintf(
		"host %s cannot be reached (since %s): %s; its items come back once it can (agentinfra doctor checks it)",
		c.o.Name, since.Local().Format(time.DateTime), what)}
}

// do sends one request and reads its answer: the host's JSON into out, or
// its error; anything that is not the host's answer (no connection, Coder's
// proxy answering for a workspace that is down, its login page) makes the
// host unreachable.
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	ctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	var body io.Reader
	if in != nil {
		body = bytes.NewReader(marshal(in))
	}
	base, err := c.located(ctx)
	if err != nil {
		return err
	}
	req, err := c.newRequest(ctx, method, endpoint(base, path, nil), body)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.o.HTTPClient.Do(req)
	if err != nil {
		return c.unreachable("no answer: "+err.Error(), err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return c.unreachable("its answer broke off: "+err.Error(), err)
	}
	if !isJSON(resp) {
		return c.unreachable(notTheHost(resp, raw), nil)
	}
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		c.reach.up()
		if out == nil {
			return nil
		}
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("host %s answered %s with JSON this agentinfra cannot read (another version?): %w", c.o.Name, path, err)
		}
		return nil
	}
	var eb errorBody
	if json.Unmarshal(raw, &eb) != nil || eb.Error == nil || eb.Error.Kind == "" {
		// Coder's own JSON error (its proxy's "Agent not connected").
		return c.unreachable(notTheHost(resp, raw), nil)
	}
	c.reach.up()
	return eb.Error.decode()
}

func isJSON(resp *http.Response) bool {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return mt == "application/json"
}

// notTheHost says what answered instead of the host.
func notTheHost(resp *http.Response, raw []byte) string {
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode <= 399:
		return fmt.Sprintf("Coder answered %d (to %s): the Coder session token is missing or expired (CODER_SESSION_TOKEN)", resp.StatusCode, resp.Header.Get("Location"))
	case resp.StatusCode == http.StatusUnauthorized && strings.Contains(string(raw), "Bearer"):
		return "the host refused its token (the token this workspace was created with is not the one it runs with)"
	}
	msg := strings.TrimSpace(string(raw))
	var coderErr struct {
		Message string `json:"message"`
		Detail  string `json:"detail"`
	}
	if json.Unmarshal(raw, &coderErr) == nil && coderErr.Message != "" {
		msg = strings.TrimSpace(coderErr.Message + " " + coderErr.Detail)
	}
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	return fmt.Sprintf("%d %s", resp.StatusCode, msg)
}

// call is POST /v1/call/{method}.
func (c *Client) call(ctx context.Context, method string, a args, out any) error {
	return c.do(ctx, http.MethodPost, "v1/call/"+method, a, out)
}

// Info reads GET /v1/info: whether the host answers, and its version.
func (c *Client) Info(ctx context.Context) (Info, error) {
	var out Info
	err := c.do(ctx, http.MethodGet, "v1/info", nil, &out)
	if err == nil && out.API != APIVersion {
		return out, &agenterr.Error{Kind: agenterr.Unavailable, Reason: fmt.Sprintf(
			"host %s speaks API %d (agentinfra %s), this agentinfra %d: install the same agentinfra in the workspace's template", c.o.Name, out.API, out.Version, APIVersion)}
	}
	return out, err
}

func (c *Client) Inbox(ctx context.Context) (supervision.Inbox, error) {
	var out supervision.Inbox
	return out, c.call(ctx, "Inbox", args{}, &out)
}

func (c *Client) Sessions(ctx context.Context, f supervision.SessionFilter) ([]supervision.Session, error) {
	var out []supervision.Session
	return out, c.call(ctx, "Sessions", args{Filter: &f}, &out)
}

func (c *Client) Session(ctx context.Context, id int64) (supervision.Session, error) {
	var out supervision.Session
	return out, c.call(ctx, "Session", args{ID: id}, &out)
}

func (c *Client) Request(ctx context.Context, id int64) (supervision.Request, error) {
	var out supervision.Request
	return out, c.call(ctx, "Request", args{ID: id}, &out)
}

func (c *Client) Requests(ctx context.Context, sessionID int64) ([]supervision.Request, error) {
	var out []supervision.Request
	return out, c.call(ctx, "Requests", args{ID: sessionID}, &out)
}

func (c *Client) Prompt(ctx context.Context, id int64) (supervision.Prompt, error) {
	var out supervision.Prompt
	return out, c.call(ctx, "Prompt", args{ID: id}, &out)
}

func (c *Client) Alert(ctx context.Context, id int64) (supervision.Alert, error) {
	var out supervision.Alert
	return out, c.call(ctx, "Alert", args{ID: id}, &out)
}

func (c *Client) Audit(ctx context.Context, sessionID int64) ([]supervision.AuditEvent, error) {
	var out []supervision.AuditEvent
	return out, c.call(ctx, "Audit", args{ID: sessionID}, &out)
}

func (c *Client) Checkpoints(ctx context.Context, sessionID int64) ([]supervision.Checkpoint, error) {
	var out []supervision.Checkpoint
	return out, c.call(ctx, "Checkpoints", args{ID: sessionID}, &out)
}

func (c *Client) Checkpoint(ctx context.Context, id int64) (supervision.Checkpoint, error) {
	var out supervision.Checkpoint
	return out, c.call(ctx, "Checkpoint", args{ID: id}, &out)
}

func (c *Client) Diverged(ctx context.Context, checkpointID int64) ([]supervision.CheckpointChange, error) {
	var out []supervision.CheckpointChange
	return out, c.call(ctx, "Diverged", args{ID: checkpointID}, &out)
}

func (c *Client) PlanAlways(ctx context.Context, id int64) (supervision.HostPlan, error) {
	var out supervision.HostPlan
	return out, c.call(ctx, "PlanAlways", args{ID: id}, &out)
}

func (c *Client) May(ctx context.Context, a supervision.Actor, sessionID int64, what string) error {
	return c.call(ctx, "May", args{Actor: &a, ID: sessionID, What: what}, nil)
}

func (c *Client) Decide(ctx context.Context, a supervision.Actor, d supervision.HostDecision) (supervision.Request, error) {
	var out supervision.Request
	return out, c.call(ctx, "Decide", args{Actor: &a, Decision: &d}, &out)
}

func (c *Client) AnswerPrompt(ctx context.Context, a supervision.Actor, ans supervision.PromptAnswer) (supervision.Prompt, error) {
	var out supervision.Prompt
	return out, c.call(ctx, "AnswerPrompt", args{Actor: &a, Prompt: &ans}, &out)
}

func (c *Client) AnswerAlert(ctx context.Context, a supervision.Actor, ans supervision.AlertAnswer) (supervision.Alert, error) {
	var out supervision.Alert
	return out, c.call(ctx, "AnswerAlert", args{Actor: &a, Alert: &ans}, &out)
}

func (c *Client) SetWatchdog(ctx context.Context, a supervision.Actor, sessionID int64, paused bool) error {
	return c.call(ctx, "SetWatchdog", args{Actor: &a, ID: sessionID, Paused: paused}, nil)
}

func (c *Client) MoveSession(ctx context.Context, a supervision.Actor, id int64, to, reason string) (supervision.Session, error) {
	var out supervision.Session
	return out, c.call(ctx, "MoveSession", args{Actor: &a, ID: id, To: to, Reason: reason}, &out)
}

func (c *Client) SetMode(ctx context.Context, a supervision.Actor, id int64, mode string) (supervision.Session, error) {
	var out supervision.Session
	return out, c.call(ctx, "SetMode", args{Actor: &a, ID: id, Mode: mode}, &out)
}

func (c *Client) SetChannel(ctx context.Context, a supervision.Actor, id int64, channel string) error {
	return c.call(ctx, "SetChannel", args{Actor: &a, ID: id, Channel: channel}, nil)
}

func (c *Client) Steer(ctx context.Context, a supervision.Actor, id int64, text string) (supervision.Steering, error) {
	var out supervision.Steering
	return out, c.call(ctx, "Steer", args{Actor: &a, ID: id, Text: text}, &out)
}

func (c *Client) CreateCheckpoint(ctx context.Context, a supervision.Actor, id int64, label string) (supervision.Checkpoint, error) {
	var out supervision.Checkpoint
	return out, c.call(ctx, "CreateCheckpoint", args{Actor: &a, ID: id, Label: label}, &out)
}

func (c *Client) RestoreCheckpoint(ctx context.Context, a supervision.Actor, r supervision.Restore) (supervision.Checkpoint, []supervision.CheckpointChange, error) {
	var out restored
	err := c.call(ctx, "RestoreCheckpoint", args{Actor: &a, Restore: &r}, &out)
	return out.Checkpoint, out.Changed, err
}

func (c *Client) Resume(ctx context.Context, a supervision.Actor, id int64) (supervision.Resumed, error) {
	var out supervision.Resumed
	return out, c.call(ctx, "Resume", args{Actor: &a, ID: id}, &out)
}

func (c *Client) PutPost(ctx context.Context, p supervision.Post) error {
	return c.call(ctx, "PutPost", args{Post: &p}, nil)
}

func (c *Client) PostOf(ctx context.Context, surface, item string, id int64) (supervision.Post, error) {
	var out supervision.Post
	return out, c.call(ctx, "PostOf", args{Surface: surface, Item: item, ID: id}, &out)
}

func (c *Client) SetPostState(ctx context.Context, surface, item string, id int64, from, to string) (bool, error) {
	var out bool
	return out, c.call(ctx, "SetPostState", args{Surface: surface, Item: item, ID: id, From: from, To: to}, &out)
}

func (c *Client) SessionOfThread(ctx context.Context, surface, channel, ts string) (int64, error) {
	var out int64
	return out, c.call(ctx, "SessionOfThread", args{Surface: surface, Channel: channel, TS: ts}, &out)
}

func (c *Client) Record(ctx context.Context, e supervision.AuditEvent) error {
	return c.call(ctx, "Record", args{Event: &e}, nil)
}

func (c *Client) LastAuditSeq(ctx context.Context) (int64, error) {
	var out int64
	return out, c.call(ctx, "LastAuditSeq", args{}, &out)
}

// Follow follows GET /v1/events (supervision.Host's Follow). Only the wait
// for the answer's headers is bounded by the client's timeout; then the
// stream counts as broken when nothing, not even a ping, comes for Idle.
func (c *Client) Follow(ctx context.Context, after int64, opened func(last int64), fn func(supervision.AuditEvent) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	base, err := c.located(ctx)
	if err != nil {
		return err
	}
	req, err := c.newRequest(ctx, http.MethodGet, endpoint(base, "v1/events", url.Values{"after": {strconv.FormatInt(after, 10)}}), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	headers := time.AfterFunc(c.o.Timeout, func() { cancel(context.DeadlineExceeded) })
	resp, err := c.o.HTTPClient.Do(req)
	headers.Stop()
	if err != nil {
		if ctx.Err() != nil && context.Cause(ctx) != context.DeadlineExceeded {
			return ctx.Err()
		}
		return c.unreachable("no answer: "+err.Error(), err)
	}
	defer resp.Body.Close()
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); resp.StatusCode != http.StatusOK || mt != "text/event-stream" {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		var eb errorBody
		if isJSON(resp) && json.Unmarshal(raw, &eb) == nil && eb.Error != nil && eb.Error.Kind != "" {
			c.reach.up()
			return eb.Error.decode()
		}
		return c.unreachable(notTheHost(resp, raw), nil)
	}
	// A stream that stays silent beyond Idle is a connection that died
	// without a word (a proxy that dropped it): it is followed again.
	idle := time.AfterFunc(c.o.Idle, func() { cancel(errIdle) })
	defer idle.Stop()
	body := &touchReader{r: resp.Body, touch: func() { idle.Reset(c.o.Idle) }}
	var failed error // fn's, or an event this agentinfra cannot read
	err = sse.Read(body, maxEventLine, func(e sse.Event) (bool, error) {
		switch e.Type {
		case "hello":
			var h struct {
				Last int64 `json:"last"`
			}
			if err := json.Unmarshal(e.Data, &h); err != nil {
				failed = fmt.Errorf("host %s sent a hello this agentinfra cannot read: %w", c.o.Name, err)
				return false, failed
			}
			c.reach.up()
			if opened != nil {
				opened(h.Last)
			}
		case "audit":
			var ev supervision.AuditEvent
			if err := json.Unmarshal(e.Data, &ev); err != nil {
				failed = fmt.Errorf("host %s sent an event this agentinfra cannot read: %w", c.o.Name, err)
				return false, failed
			}
			if failed = fn(ev); failed != nil {
				return false, failed
			}
		}
		return true, nil
	})
	switch {
	case failed != nil:
		return failed
	case context.Cause(ctx) == errIdle:
		return c.unreachable(fmt.Sprintf("its event stream was silent for %s", c.o.Idle), errIdle)
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return c.unreachable("its event stream broke off", err)
}

var errIdle = errors.New("the event stream was silent too long")

// touchReader calls touch whenever bytes come.
type touchReader struct {
	r     io.Reader
	touch func()
}

func (t *touchReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if n > 0 {
		t.touch()
	}
	return n, err
}
