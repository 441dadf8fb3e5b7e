package host

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/internal/sse"
	"github.com/agentinfra/agentinfra/supervision"
)

// ServerOptions tune Handler.
type ServerOptions struct {
	// Name is the host's name in /v1/info (the Coder workspace's).
	Name string
	// Ping is how often a quiet event stream gets a comment, so that
	// proxies keep it open and the client knows it is alive (0: 15 s).
	Ping time.Duration
	// Batch bounds the audit events read at once for the stream (0: 500).
	Batch int
}

// DefaultPing is ServerOptions.Ping's default.
const DefaultPing = 15 * time.Second

// Handler serves svc's API (the package's doc). It checks no token: the
// caller wraps it in httpguard.Handler with one.
func Handler(svc *supervision.Service, o ServerOptions) http.Handler {
	if o.Ping <= 0 {
		o.Ping = DefaultPing
	}
	if o.Batch <= 0 {
		o.Batch = 500
	}
	h := &server{svc: svc, o: o}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/info", h.info)
	mux.HandleFunc("POST /v1/call/{method}", h.call)
	mux.HandleFunc("GET /v1/events", h.events)
	return mux
}

type server struct {
	svc *supervision.Service
	o   ServerOptions
}

func (h *server) info(w http.ResponseWriter, r *http.Request) {
	last, err := h.svc.LastAuditSeq(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, Info{API: APIVersion, Name: h.o.Name, Version: Version(), Root: h.svc.Root(), LastSeq: last})
}

// methods are the Service's methods the API serves, by name: each reads
// its arguments and returns its result.
var methods = map[string]func(ctx context.Context, svc *supervision.Service, a args) (any, error){
	"Inbox": func(ctx context.Context, svc *supervision.Service, _ args) (any, error) { return svc.Inbox(ctx) },
	"Sessions": func(ctx context.Context, svc *supervision.Service, a args) (any, error) {
		return svc.Sessions(ctx, deref(a.Filter))
	},
	"Session": func(ctx context.Context, svc *supervision.Service, a args) (any, error) {
		return svc.Session(ctx, a.ID)
	},
	"Request": func(ctx context.Context, svc *supervision.Service, a args) (any, error) {
		return svc.Request(ctx, a.ID)
	},
	"Requests": func(ctx context.Context, svc *supervision.Service, a args) (any, error) {
		return svc.Requests(ctx, a.ID)
	},
	"Prompt": func(ctx context.Context, svc *supervision.Service, a args) (any, error) { return svc.Prompt(ctx, a.ID) },
	"Alert":  func(ctx context.Context, svc *supervision.Service, a args) (any, error) { return svc.Alert(ctx, a.ID) },
	"Audit": func(ctx context.Context, svc *supervision.Service, a args) (any, error) {
		if a.ID == 0 {
			return nil, agenterr.Invalidf("id", "a host's audit log is read one session at a time")
		}
		return svc.Audit(ctx, a.ID)
	},
	"Checkpoints": func(ctx context.Context, svc *supervision.Service, a args) (any, error) {
		if a.ID == 0 {
			return nil, agenterr.Invalidf("id", "a host's checkpoints are read one session at a time")
		}
		return svc.Checkpoints(ctx, a.ID)
	},
	"Checkpoint": func(ctx context.Context, svc *supervision.Service, a args) (any, error) {
		return svc.Checkpoint(ctx, a.ID)
	},
	"Diverged": func(ctx context.Context, svc *supervision.Service, a args) (any, error) {
		c, err := svc.Checkpoint(ctx, a.ID)
		if err != nil {
			return nil, err
		}
		return svc.Diverged(ctx, c)
	},
	"PlanAlways": func(ctx context.Context, svc *supervision.Service, a args) (any, error) {
		p, err := svc.PlanAlways(ctx, a.ID)
		if err != nil {
			return nil, err
		}
		return supervision.HostPlan{Rule: p.RuleText(), Key: p.Rule.Key, Value: p.Rule.Value, Diff: p.Diff, Note: p.Note, Fingerprint: p.Fingerprint()}, nil
	},
	"May": func(ctx context.Context, svc *supervision.Service, a args) (any, error) {
		ses, err := svc.Session(ctx, a.ID)
		if err != nil {
			return nil, err
		}
		return struct{}{}, svc.May(ctx, deref(a.Actor), ses, a.What)
	},
	"Decide": func(ctx context.Context, svc *supervision.Service, a args) (any, error) {
		d := deref(a.Decision)
		dec := supervision.Decision{Request: d.Request, Approve: d.Approve, Reason: d.Reason, Session: d.Session}
		if d.Always != "" {
			plan, err := svc.PlanAlways(ctx, d.Request)
			if err != nil {
				return nil, err
			}
			if plan.Fingerprint() != d.Always {
				return nil, agenterr.Conflictf("the rule \"approve always\" would add to the workspace's policy is no longer the one shown (it is now %s): look at the request again", plan.RuleText())
			}
			dec.Always = plan
		}
		return svc.Decide(ctx, deref(a.Actor), dec)
	},
	"AnswerPrompt": func(ctx context.Context, svc *supervision.Service, a args) (any, error) {
		return svc.AnswerPrompt(ctx, deref(a.Actor), deref(a.Prompt))
	},
	"AnswerAlert": func(ctx context.Context, svc *supervision.Service, a args) (any, error) {
		return svc.AnswerAlert(ctx, deref(a.Actor), deref(a.Alert))
	},
	"SetWatchdog": func(ctx context.Context, svc *supervision.Service, a args) (any, error) {
		return struct{}{}, svc.SetWatchdog(ctx, deref(a.Actor), a.ID, a.Paused)
	},
	"MoveSession": func(ctx context.Context, svc *supervision.Service, a args) (any, error) {
		return svc.MoveSession(ctx, deref(a.Actor), a.ID, a.To, a.Reason)
	},
	"SetMode": func(ctx context.Context, svc *supervision.Service, a args) (any, error) {
		return svc.SetMode(ctx, deref(a.Actor), a.ID, a.Mode)
	},
	"SetChannel": func(ctx context.Context, svc *supervision.Service, a args) (any, error) {
		return struct{}{}, svc.SetChannel(ctx, deref(a.Actor), a.ID, a.Channel)
	},
	"Steer": func(ctx context.Context, svc *supervision.Service, a args) (any, error) {
		return svc.Steer(ctx, deref(a.Actor), a.ID, a.Text)
	},
	"CreateCheckpoint": func(ctx context.Context, svc *supervision.Service, a args) (any, error) {
		return svc.CreateCheckpoint(ctx, deref(a.Actor), a.ID, a.Label)
	},
	"RestoreCheckpoint": func(ctx context.Context, svc *supervision.Service, a args) (any, error) {
		c, changed, err := svc.RestoreCheckpoint(ctx, deref(a.Actor), deref(a.Restore))
		if err != nil {
			return nil, err
		}
		return restored{Checkpoint: c, Changed: changed}, nil
	},
	"Resume": func(ctx context.Context, svc *supervision.Service, a args) (any, error) {
		return svc.Resume(ctx, deref(a.Actor), a.ID)
	},
	"PutPost": func(ctx context.Context, svc *supervision.Service, a args) (any, error) {
		return struct{}{}, svc.PutPost(ctx, deref(a.Post))
	},
	"PostOf": func(ctx context.Context, svc *supervision.Service, a args) (any, error) {
		return svc.PostOf(ctx, a.Surface, a.Item, a.ID)
	},
	"SetPostState": func(ctx context.Context, svc *supervision.Service, a args) (any, error) {
		return svc.SetPostState(ctx, a.Surface, a.Item, a.ID, a.From, a.To)
	},
	"SessionOfThread": func(ctx context.Context, svc *supervision.Service, a args) (any, error) {
		return svc.SessionOfThread(ctx, a.Surface, a.Channel, a.TS)
	},
	"Record": func(ctx context.Context, svc *supervision.Service, a args) (any, error) {
		return struct{}{}, svc.Record(ctx, deref(a.Event))
	},
	"LastAuditSeq": func(ctx context.Context, svc *supervision.Service, _ args) (any, error) { return svc.LastAuditSeq(ctx) },
}

func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

func (h *server) call(w http.ResponseWriter, r *http.Request) {
	m := methods[r.PathValue("method")]
	if m == nil {
		writeError(w, &agenterr.Error{Kind: agenterr.NotFound, Field: "method", Value: r.PathValue("method"), What: "method",
			Reason: "this host does not serve that method: an agentinfra of another version?"})
		return
	}
	var a args
	if err := json.NewDecoder(r.Body).Decode(&a); err != nil {
		writeError(w, agenterr.Invalidf("body", "the arguments are not JSON: %v", err))
		return
	}
	out, err := m(r.Context(), h.svc, a)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// events streams the audit log (the package's doc).
func (h *server) events(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	after, err := afterOf(r)
	if err != nil {
		writeError(w, err)
		return
	}
	last, err := h.svc.LastAuditSeq(ctx)
	if err != nil {
		writeError(w, err)
		return
	}
	if after < 0 || after > last {
		// From now; a number beyond the log (a store started afresh) is
		// now too: nothing after it would ever come.
		after = last
	}
	// Subscribed before the first read: a change between the read and the
	// wait is not lost.
	changes, err := h.svc.Changes(ctx)
	if err != nil {
		writeError(w, err)
		return
	}
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if sse.Write(w, "", "hello", marshal(map[string]int64{"last": last})) != nil || rc.Flush() != nil {
		return
	}
	ping := time.NewTicker(h.o.Ping)
	defer ping.Stop()
	for {
		evs, err := h.svc.AuditAfter(ctx, after, h.o.Batch)
		if err != nil {
			return // the client follows again
		}
		for _, ev := range evs {
			if sse.Write(w, strconv.FormatInt(ev.Seq, 10), "audit", marshal(ev)) != nil {
				return
			}
			after = ev.Seq
		}
		if len(evs) > 0 && rc.Flush() != nil {
			return
		}
		if len(evs) == h.o.Batch {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case _, ok := <-changes:
			if !ok {
				return
			}
		case <-ping.C:
			if _, err := w.Write([]byte(": ping\n\n")); err != nil || rc.Flush() != nil {
				return
			}
		}
	}
}

// afterOf is where a stream starts: ?after=N, else Last-Event-ID (a
// browser's reconnection), else now (-1).
func afterOf(r *http.Request) (int64, error) {
	v := r.URL.Query().Get("after")
	if v == "" {
		v = r.Header.Get("Last-Event-ID")
	}
	if v == "" {
		return -1, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, agenterr.Invalidf("after", "%q is not an audit event's number", v)
	}
	return n, nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, err error) {
	we := encodeError(err)
	writeJSON(w, agenterr.HTTPStatus(err), errorBody{Error: &we})
}
