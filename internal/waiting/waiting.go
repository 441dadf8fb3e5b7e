// Package waiting is what a supervised run waits for a person to answer,
// and the small file that says so to the commands that open no database.
//
// A supervised run's supervisor keeps one marker per waiting session,
// .agent/state/waiting/s{session}.json, written when its session starts to
// wait (an approval request, a continuation prompt, a stall alert) and
// removed when nothing waits any more or the run ends. The light commands
// (`task list`, `task show`) and the fleet's files (`agent list`) read the
// markers instead of linking the store: what they show is what the
// supervisor saw, at most one store poll (50 ms) late. A marker whose
// supervisor is gone (a crash) is ignored; the reaper of that session
// removes it.
package waiting

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/internal/atomicfile"
)

// What a session waits for.
const (
	KindRequest = "request"
	KindPrompt  = "prompt"
	KindAlert   = "alert"
)

// Item is what one session waits for: the oldest of its pending request,
// continuation prompt and stall alert.
type Item struct {
	Kind string `json:"kind"` // request, prompt or alert
	ID   int64  `json:"id"`
	// Ref is the ID as the commands take it: 6 (approve 6), p4, s2.
	Ref string `json:"ref"`
	// What is the request's title, the prompt's kind, the alert's reason
	// (the agent's text: show it inert).
	What  string    `json:"what,omitempty"`
	Since time.Time `json:"since"`
}

// Ref writes an item's ID as the commands take it.
func Ref(kind string, id int64) string {
	switch kind {
	case KindPrompt:
		return fmt.Sprintf("p%d", id)
	case KindAlert:
		return fmt.Sprintf("s%d", id)
	}
	return fmt.Sprint(id)
}

// Label is the item as a person reads it: "request 6", "prompt p4",
// "alert s2".
func (it Item) Label() string { return it.Kind + " " + it.Ref }

// Summary is "waiting: request 6, 2m" (the age rounded to the second up
// to a minute, then to the minute).
func (it Item) Summary(now time.Time) string {
	return fmt.Sprintf("waiting: %s, %s", it.Label(), Age(now.Sub(it.Since)))
}

// Age is a short duration for a person: 8s, 2m, 1h5m.
func Age(d time.Duration) string {
	switch {
	case d < 0:
		d = 0
	case d >= time.Minute:
		d = d.Truncate(time.Minute)
		return strings.TrimSuffix(d.String(), "0s")
	}
	return d.Round(time.Second).String()
}

// HowToAnswer is the command line that answers the item.
func (it Item) HowToAnswer() string {
	switch it.Kind {
	case KindPrompt:
		return fmt.Sprintf("agentinfra answer %s continue|stop|refine TEXT", it.Ref)
	case KindAlert:
		return fmt.Sprintf("agentinfra answer %s nudge|dismiss|stop", it.Ref)
	}
	return fmt.Sprintf("agentinfra approve %s / agentinfra reject %s --reason TEXT", it.Ref, it.Ref)
}

// Mark is the marker file of a waiting session: the item and the run it
// belongs to.
type Mark struct {
	Item
	Session int64  `json:"session"`
	Task    string `json:"task_id,omitempty"`
	Agent   string `json:"agent,omitempty"`
	RunID   string `json:"run_id,omitempty"`
	// PID is the session's supervisor: a marker whose supervisor is gone
	// says nothing.
	PID int `json:"pid"`
}

// Dir is the folder of the markers of the workspace at root.
func Dir(root string) string { return filepath.Join(root, ".agent", "state", "waiting") }

func path(root string, session int64) string {
	return filepath.Join(Dir(root), fmt.Sprintf("s%d.json", session))
}

// Write records that m's session waits (replacing what it waited for).
func Write(root string, m Mark) error {
	if err := os.MkdirAll(Dir(root), 0o755); err != nil {
		return err
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return atomicfile.Write(path(root, m.Session), b)
}

// Clear records that session waits for nothing.
func Clear(root string, session int64) error {
	err := os.Remove(path(root, session))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// maxMarker bounds what a reader reads of a marker (they are a few hundred
// bytes; anything larger is not one of ours).
const maxMarker = 64 << 10

// All reads the markers of the live supervisors, oldest first. A folder
// that does not exist is no marker; a marker that does not read is skipped.
func All(root string) []Mark {
	ents, err := os.ReadDir(Dir(root))
	if err != nil {
		return nil
	}
	var out []Mark
	for _, e := range ents {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		m, ok := read(filepath.Join(Dir(root), e.Name()))
		if ok && alive(m.PID) {
			out = append(out, m)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Since.Before(out[j].Since) })
	return out
}

func read(p string) (Mark, bool) {
	f, err := os.Open(p)
	if err != nil {
		return Mark{}, false
	}
	defer f.Close()
	var m Mark
	b := make([]byte, maxMarker)
	n, _ := f.Read(b)
	if n == 0 || n == maxMarker || json.Unmarshal(b[:n], &m) != nil || m.Session == 0 {
		return Mark{}, false
	}
	return m, true
}

// ByTask is the marker of each waiting task.
func ByTask(root string) map[string]Mark {
	out := map[string]Mark{}
	for _, m := range All(root) {
		if m.Task != "" {
			if _, ok := out[m.Task]; !ok {
				out[m.Task] = m
			}
		}
	}
	return out
}

// ByRun is the marker of each waiting run.
func ByRun(root string) map[string]Mark {
	out := map[string]Mark{}
	for _, m := range All(root) {
		if m.RunID != "" {
			out[m.RunID] = m
		}
	}
	return out
}
