// Package host is the supervision service across machines: the HTTP API
// an agentinfra host serves from inside a Coder workspace (`agentinfra
// agent host`: Handler) and the client the local agentinfra reaches it
// with through Coder's app proxy (Client, a supervision.Host). The
// workspace's store is the truth for its sessions: every read and change
// the client makes is the host's Service's, in the host's IDs (the local
// Service translates them), so a decision is the host store's
// compare-and-set whoever sends it.
//
// The API (docs/coder.md): GET /v1/info (the host's name, version and
// newest audit event); POST /v1/call/{method} with the method's arguments
// as JSON, answered with its result as JSON or with an error (the agenterr
// kind's status, and {"error": {...}} saying what went wrong, which item
// won a lost answer); GET /v1/events?after=N, the host's audit log as
// server-sent events numbered by their audit sequence (id), from after N
// (Last-Event-ID too; after=-1: from now), a "hello" event first with the
// newest number, ": ping" comments while nothing happens. Every request
// carries the host's token (Authorization: Bearer); through Coder's proxy
// also the person's Coder session token, which Coder takes and does not
// pass on.
package host

import (
	"encoding/json"
	"errors"
	"runtime/debug"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/supervision"
	"github.com/agentinfra/agentinfra/supervision/checkpoint"
)

// APIVersion is the version of the API: a client refuses a host that
// speaks another.
const APIVersion = 1

// Info is GET /v1/info.
type Info struct {
	API     int    `json:"api"`
	Name    string `json:"name"`
	Version string `json:"version"`
	Root    string `json:"root"`
	// LastSeq is the newest audit event's number.
	LastSeq int64 `json:"last_seq"`
}

// Version is this binary's version as the build recorded it: the module's
// version, else the VCS revision, else "dev".
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			return "dev-" + s.Value[:12]
		}
	}
	return "dev"
}

// args are the arguments of every method (each uses some).
type args struct {
	ID       int64                      `json:"id,omitempty"`
	Filter   *supervision.SessionFilter `json:"filter,omitempty"`
	Actor    *supervision.Actor         `json:"actor,omitempty"`
	What     string                     `json:"what,omitempty"`
	Decision *supervision.HostDecision  `json:"decision,omitempty"`
	Prompt   *supervision.PromptAnswer  `json:"prompt,omitempty"`
	Alert    *supervision.AlertAnswer   `json:"alert,omitempty"`
	Paused   bool                       `json:"paused,omitempty"`
	To       string                     `json:"to,omitempty"`
	Reason   string                     `json:"reason,omitempty"`
	Mode     string                     `json:"mode,omitempty"`
	Channel  string                     `json:"channel,omitempty"`
	Text     string                     `json:"text,omitempty"`
	Label    string                     `json:"label,omitempty"`
	Restore  *supervision.Restore       `json:"restore,omitempty"`
	Post     *supervision.Post          `json:"post,omitempty"`
	Surface  string                     `json:"surface,omitempty"`
	Item     string                     `json:"item,omitempty"`
	TS       string                     `json:"ts,omitempty"`
	From     string                     `json:"from,omitempty"`
	Event    *supervision.AuditEvent    `json:"event,omitempty"`
}

// restored is RestoreCheckpoint's answer.
type restored struct {
	Checkpoint supervision.Checkpoint         `json:"checkpoint"`
	Changed    []supervision.CheckpointChange `json:"changed"`
}

// wireError is an error as the API answers it: the agenterr kind and the
// message, the item a lost answer found settled, the files of a refused
// restore, and the sentinels it matches (errors.Is on the client).
type wireError struct {
	Kind    agenterr.Kind `json:"kind"`
	Message string        `json:"message"`
	Field   string        `json:"field,omitempty"`
	Value   string        `json:"value,omitempty"`
	Holder  string        `json:"holder,omitempty"`
	Is      []string      `json:"is,omitempty"`
	Decided *decided      `json:"decided,omitempty"`
	// Diverged is a refused restore's checkpoint and files.
	Diverged *supervision.DivergedError `json:"diverged,omitempty"`
}

type decided struct {
	Request *supervision.Request `json:"request,omitempty"`
	Prompt  *supervision.Prompt  `json:"prompt,omitempty"`
	Alert   *supervision.Alert   `json:"alert,omitempty"`
}

// sentinels are the errors a client's caller tells apart with errors.Is,
// by their names on the wire.
var sentinels = []struct {
	name string
	err  error
}{
	{"expired", supervision.ErrExpired},
	{"bad_transition", supervision.ErrBadTransition},
	{"pending_exists", supervision.ErrPendingExists},
	{"not_found", supervision.ErrNotFound},
	{"not_allowed", supervision.ErrNotAllowed},
	{"diverged", checkpoint.ErrDiverged},
}

// encodeError is err on the wire.
func encodeError(err error) wireError {
	we := wireError{Kind: agenterr.KindOf(err), Message: err.Error()}
	if ae := agenterr.As(err); ae != nil {
		we.Field, we.Value, we.Holder = ae.Field, ae.Value, ae.Holder
	}
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			we.Is = append(we.Is, s.name)
		}
	}
	var de *supervision.DecidedError
	if errors.As(err, &de) {
		we.Decided = &decided{}
		switch {
		case de.Prompt.ID != 0:
			we.Decided.Prompt = &de.Prompt
		case de.Alert.ID != 0:
			we.Decided.Alert = &de.Alert
		default:
			we.Decided.Request = &de.Request
		}
	}
	var dv *supervision.DivergedError
	if errors.As(err, &dv) {
		we.Diverged = dv
	}
	return we
}

// decode is the error the API answered, as the host's Service returned it
// as far as the caller tells errors apart: a *DecidedError, a
// *DivergedError, else an *agenterr.Error of the kind with the host's
// message, wrapping the first sentinel it matched.
func (we wireError) decode() error {
	if d := we.Decided; d != nil {
		out := &supervision.DecidedError{}
		switch {
		case d.Prompt != nil:
			out.Prompt = *d.Prompt
		case d.Alert != nil:
			out.Alert = *d.Alert
		case d.Request != nil:
			out.Request = *d.Request
		}
		return out
	}
	if we.Diverged != nil {
		return we.Diverged
	}
	e := &agenterr.Error{Kind: we.Kind, Reason: we.Message, Holder: we.Holder}
	if e.Kind == "" {
		e.Kind = agenterr.Internal
	}
	for _, name := range we.Is {
		for _, s := range sentinels {
			if s.name == name && e.Err == nil {
				e.Err = s.err
			}
		}
	}
	if we.Field == "id" && e.Kind == agenterr.NotFound {
		e.Field, e.Value = we.Field, we.Value
	}
	return e
}

// errorBody is the body of an error answer.
type errorBody struct {
	Error *wireError `json:"error"`
}

func marshal(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
