package full

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentinfra/agentinfra/supervision"
	"github.com/agentinfra/agentinfra/supervision/host"
)

// workspaceHosts are hostsOf the current workspace (none outside one).
func (f *Factory) workspaceHosts(ctx context.Context) ([]supervision.HostEntry, []string) {
	ws, err := f.Workspace()
	if err != nil {
		return nil, nil
	}
	return f.hostsOf(ctx, ws)
}

// checkCoderHosts asks the agentinfra host of each supervised agent on
// Coder whether it answers, through Coder's app proxy, and which
// agentinfra it runs: a host that does not answer is a warning (its
// workspace may be stopped), one that speaks another API a failure.
func checkCoderHosts(ctx context.Context, o *DoctorOptions) Finding {
	if o.Hosts == nil {
		return Finding{Status: DoctorOK, Detail: "no supervised agents on Coder"}
	}
	hosts, warnings := o.Hosts(ctx)
	if len(hosts) == 0 && len(warnings) == 0 {
		return Finding{Status: DoctorOK, Detail: "no supervised agents on Coder"}
	}
	var ok, down, wrong []string
	for _, h := range hosts {
		c, isClient := h.Host.(*host.Client)
		if !isClient {
			continue
		}
		info, err := c.Info(ctx)
		switch {
		case err != nil && info.API != 0:
			wrong = append(wrong, err.Error())
		case err != nil:
			down = append(down, fmt.Sprintf("%s: %v", c.Name(), err))
		default:
			ok = append(ok, fmt.Sprintf("%s (agentinfra %s, API %d)", c.Name(), info.Version, info.API))
		}
	}
	down = append(down, warnings...)
	detail := fmt.Sprintf("%d host(s) answer", len(ok))
	if len(ok) > 0 {
		detail += ": " + strings.Join(ok, ", ")
	}
	switch {
	case len(wrong) > 0:
		return Finding{Status: DoctorFail, Detail: detail + "; " + strings.Join(wrong, "; "),
			Fix: "install the same agentinfra in the workspaces' template as here (docs/coder.md)"}
	case len(down) > 0:
		return Finding{Status: DoctorWarn, Detail: detail + "; " + strings.Join(down, "; "),
			Fix: "start the workspaces (coder start NAME); a running one needs the agentinfra app of docs/coder.md's template"}
	}
	return Finding{Status: DoctorOK, Detail: detail}
}
