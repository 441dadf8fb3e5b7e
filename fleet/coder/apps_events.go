package coder

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agentinfra/agentinfra/internal/sse"
)

// maxEventLine bounds one line of the AgentAPI event stream: a
// message_update carries a whole message as the agent's terminal shows it,
// which for a long answer runs to hundreds of KB.
const maxEventLine = 8 << 20

// AgentEvents follows the AgentAPI app's event stream (GET events, server-
// sent events) through Coder's app proxy: first the app's current state
// (a message_update per message, then a status_change), then every change.
// It calls fn for each event in order until fn returns false (AgentEvents
// then returns nil), ctx ends or the stream ends (both an error of
// KindUnavailable; errors.Is(err, context.Canceled) tells a cancelled ctx).
// Only the wait for the answer's headers is bounded by the client's
// timeout: a stream stays open as long as the app has nothing to say.
func (c *Client) AgentEvents(ctx context.Context, app App, fn func(AgentEvent) bool) error {
	u, err := c.appEndpoint(ctx, app, "events")
	if err != nil {
		return err
	}
	shown := u.Redacted()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return &Error{Kind: KindUnexpected, Method: http.MethodGet, URL: shown, Msg: "cannot build the request", Err: err}
	}
	req.Header.Set(SessionTokenHeader, c.token)
	req.Header.Set("Accept", "text/event-stream")
	var timedOut atomic.Bool
	timer := time.AfterFunc(c.timeout, func() { timedOut.Store(true); cancel() })
	resp, err := c.http.Do(req)
	if !timer.Stop() && timedOut.Load() {
		if resp != nil {
			resp.Body.Close()
		}
		return unreachableError(http.MethodGet, shown, c.timeout, context.DeadlineExceeded)
	}
	if err != nil {
		return unreachableError(http.MethodGet, shown, c.timeout, err)
	}
	defer resp.Body.Close() // closing ends the stream
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		var r *Response
		if strings.Contains(resp.Header.Get("Content-Type"), "json") {
			r = parseErrorBody(raw)
		}
		return statusError(http.MethodGet, shown, resp.StatusCode, r, resp.Header.Get("Location"))
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		return &Error{Kind: KindUnexpected, Method: http.MethodGet, URL: shown, Status: resp.StatusCode,
			Msg: fmt.Sprintf("the AgentAPI app %q of %s answered %q, not an event stream; check the app's slug points at AgentAPI",
				app.Slug, app.Workspace, resp.Header.Get("Content-Type"))}
	}
	err = sse.Read(resp.Body, maxEventLine, func(e sse.Event) (bool, error) {
		ev, err := decodeAgentEvent(e.Type, e.Data)
		if err != nil {
			return false, &Error{Kind: KindUnexpected, Method: http.MethodGet, URL: shown, Status: resp.StatusCode,
				Msg: fmt.Sprintf("cannot read the %s event the AgentAPI app %q of %s sent", e.Type, app.Slug, app.Workspace), Err: err}
		}
		return fn(ev), nil
	})
	var e *Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &e):
		return err
	case errors.Is(err, bufio.ErrTooLong):
		return &Error{Kind: KindUnexpected, Method: http.MethodGet, URL: shown, Status: resp.StatusCode,
			Msg: fmt.Sprintf("the AgentAPI app %q of %s sent an event line longer than %d bytes", app.Slug, app.Workspace, maxEventLine), Err: err}
	case ctx.Err() != nil:
		return &Error{Kind: KindUnavailable, Method: http.MethodGet, URL: shown, Status: resp.StatusCode,
			Msg: "stopped following the events of " + shown, Err: ctx.Err()}
	default:
		return &Error{Kind: KindUnavailable, Method: http.MethodGet, URL: shown, Status: resp.StatusCode,
			Msg: fmt.Sprintf("the event stream of the AgentAPI app %q of %s ended (the workspace stopped, "+
				"the app restarted or the network broke); follow it again to get the current state", app.Slug, app.Workspace), Err: err}
	}
}

// decodeAgentEvent types the data of the two event types the fleet reads.
func decodeAgentEvent(typ string, data []byte) (AgentEvent, error) {
	ev := AgentEvent{Type: typ, Data: json.RawMessage(append([]byte(nil), data...))}
	switch typ {
	case EventMessageUpdate:
		ev.MessageUpdate = &AgentMessageUpdate{}
		return ev, json.Unmarshal(data, ev.MessageUpdate)
	case EventStatusChange:
		ev.StatusChange = &AgentStatusChange{}
		if err := json.Unmarshal(data, ev.StatusChange); err != nil {
			return ev, err
		}
		if ev.StatusChange.Status != AgentAPIStable && ev.StatusChange.Status != AgentAPIRunning {
			return ev, fmt.Errorf("status %q is neither %q nor %q", ev.StatusChange.Status, AgentAPIStable, AgentAPIRunning)
		}
	}
	return ev, nil
}
