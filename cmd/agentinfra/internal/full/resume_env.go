package full

import (
	"context"
	"fmt"

	"github.com/agentinfra/agentinfra/fleet/local"
	"github.com/agentinfra/agentinfra/internal/termsafe"
	"github.com/agentinfra/agentinfra/supervision"
	"github.com/agentinfra/agentinfra/supervision/resume"
	"github.com/agentinfra/agentinfra/workspace"
)

// resumer restarts the interrupted supervised runs of ws (`session resume`,
// and supervision.resume: auto).
func (f *Factory) resumer(ws *workspace.Workspace) *resume.Resumer {
	return &resume.Resumer{WS: ws, Fleet: local.Options{Now: f.Now}}
}

// resumeReport says on stderr what supervision.resume: auto did.
func (f *Factory) resumeReport() resume.Report {
	return resume.Report{
		Resumed: func(r supervision.Resumed) {
			what := fmt.Sprintf("session %d", r.Session.ID)
			if r.Session.Agent != "" {
				what += " (agent " + termsafe.Line(r.Session.Agent) + ")"
			}
			if r.Session.TaskID != "" {
				what += ", task " + termsafe.Line(r.Session.TaskID)
			}
			fmt.Fprintf(f.IO.ErrOut, "agentinfra: resumed %s: its supervisor had died (supervision.resume: auto); new supervisor pid %d\n", what, r.Supervisor)
		},
		Failed: func(err error) { fmt.Fprintf(f.IO.ErrOut, "agentinfra: warning: could not resume %v\n", err) },
	}
}

// fleetAutoResume is what every fleet command does first (supervision.resume
// auto: the runs of dead supervisors are resumed; nothing otherwise).
func (f *Factory) fleetAutoResume(ctx context.Context, ws *workspace.Workspace) {
	f.resumer(ws).ReapAndAuto(ctx, f.resumeReport())
}
