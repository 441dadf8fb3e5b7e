package resume

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/agentinfra/agentinfra/internal/mdtext"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/workspace"
)

// Message is the first prompt of a resumed run whose CLI continues its own
// session: what happened, and that a call waiting for approval never ran.
func Message(ses store.Session, by string, auto bool) string {
	return stopped(ses, by, auto) + " Continue the task where you left off. " +
		"A tool call that was waiting for approval when it stopped did not run: make it again if it is still needed."
}

// stopped says that the run's supervisor stopped and who resumed the run.
func stopped(ses store.Session, by string, auto bool) string {
	who := store.Handle(by)
	if auto {
		who = "agentinfra (supervision.resume: auto)"
	}
	return fmt.Sprintf("agentinfra: the process supervising this run stopped (%s), and %s resumed the run.", mdtext.Or(ses.EndReason, "interrupted"), who)
}

// Done is what was done in session ses before it was interrupted, as
// agentinfra recorded it, for a CLI that cannot continue its own session
// (it never said it, or it cannot load it: gemini 0.61.0, see
// docs/supervision.md): a new session is given the run's prompt again and
// this, which says who resumed the run as Message does.
func Done(ctx context.Context, st *store.Store, ses store.Session, by string, auto bool) (string, error) {
	reqs, err := st.Requests(ctx, ses.ID)
	if err != nil {
		return "", err
	}
	evs, err := st.Audit(ctx, ses.ID)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("## Resumed\n\n" + stopped(ses, by, auto) + " This task was being worked on in that run (the prompt above is the one it was given), " +
		"but its conversation could not be continued, so this is what was done before, as agentinfra recorded it; check the files before you repeat anything.\n\n")
	n := 0
	for _, r := range reqs {
		n++
		fmt.Fprintf(&b, "- %s: %s\n", oneLine(r.Title), outcome(r))
	}
	for _, e := range evs {
		if e.Action != "auto_approved" {
			continue
		}
		var d struct {
			Tool, Command, File string
		}
		json.Unmarshal(e.Detail, &d)
		what := mdtext.Or(d.Command, mdtext.Or(d.File, d.Tool))
		n++
		fmt.Fprintf(&b, "- %s %s: ran without asking (%s)\n", d.Tool, oneLine(what), e.Surface)
	}
	if n == 0 {
		b.WriteString("- no tool call was asked about or recorded\n")
	}
	if ses.Progress != "" {
		fmt.Fprintf(&b, "\nThe last progress recorded: %s\n", oneLine(ses.Progress))
	}
	return b.String(), nil
}

func outcome(r store.Request) string {
	switch r.Status {
	case store.StatusApproved:
		return "approved by " + store.Handle(r.DecidedBy) + " (it ran, or was about to)"
	case store.StatusRejected:
		s := "rejected by " + store.Handle(r.DecidedBy)
		if r.Reason != "" {
			s += ": " + oneLine(r.Reason)
		}
		return s + " (it did not run)"
	case store.StatusInterrupted:
		return "waiting for approval when the run stopped (it did not run)"
	}
	return r.Status + " (it did not run)"
}

func oneLine(s string) string { return mdtext.Shorten(strings.Join(strings.Fields(s), " "), 200) }

// logPath is where a dispatch's resumed run's supervisor writes what it
// prints: beside the store.
func logPath(ws *workspace.Workspace, id int64) string {
	return filepath.Join(store.StateDir(ws), fmt.Sprintf("resume-%d.log", id))
}

// jsonRecord reads a dispatch's record from its row.
func jsonRecord(row store.RunRow, out any) error { return json.Unmarshal(row.Record, out) }
