package bridge

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/runner"
)

// ErrProtocol marks a CLI that spoke to its bridge in a way the bridge does
// not understand (a permission request of another shape, a request the
// bridge does not know, a protocol version it does not speak): the run ends
// as failed with the message, instead of waiting forever for an answer the
// bridge cannot give, or of running a call nobody approved.
var ErrProtocol = agenterr.New(agenterr.Unavailable, "the agent CLI speaks a protocol agentinfra's bridge does not understand")

// rawLimit bounds the raw message a refusal quotes.
const rawLimit = 2000

// NotUnderstood is the error of a message the bridge of cli does not
// understand: what it expected, and the raw message as it came (clipped).
func NotUnderstood(cli, expected string, raw []byte) error {
	return &agenterr.Error{Kind: agenterr.Unavailable, Err: ErrProtocol, Reason: fmt.Sprintf(
		"%s sent a message agentinfra's bridge does not understand (expected %s): %s; the run is ended; run `agentinfra doctor`",
		cli, expected, Clip(raw))}
}

// Clip is a raw message as a refusal quotes it: one line, at most rawLimit
// bytes (cut on a character).
func Clip(raw []byte) string {
	s := strings.TrimSpace(string(raw))
	if len(s) <= rawLimit {
		return s
	}
	cut := rawLimit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… (%d bytes)", len(s))
}

// Refusal is a run's end on a message its bridge does not understand: the
// first one is kept (the run's result error), said in the run's log, and
// the CLI stopped.
type Refusal struct {
	mu  sync.Mutex
	err string
}

// Refuse records err when it is the run's first, tells g's events and
// stops the run with stop (from a goroutine: stop waits for the process,
// and the caller is its reader).
func (r *Refusal) Refuse(g *Gate, err error, stop func()) {
	r.mu.Lock()
	first := r.err == ""
	if first {
		r.err = err.Error()
	}
	r.mu.Unlock()
	if first {
		g.Event(runner.Event{Kind: "error", Text: err.Error()})
		go stop()
	}
}

// Err is the refusal's reason ("" when none).
func (r *Refusal) Err() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}
