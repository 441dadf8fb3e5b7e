package execute

import (
	"context"
	"os"

	"github.com/agentinfra/agentinfra/agentcli/clicheck"
	"github.com/agentinfra/agentinfra/runner"
)

// checkCLI is what a supervised run's CLI passes before the run claims
// anything: agentinfra's protocol check of the binary as it is (cached per
// binary and version; clicheck.Require). A CLI that fails it is refused
// with what differs, instead of a run that would hang or go unsupervised;
// one outside the tested versions warns, once, in the record and the run's
// events.
func (x *execution) checkCLI(ctx context.Context) error {
	getenv := x.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	warning, err := clicheck.Require(ctx, x.Record.CLI, x.Request.Binary, getenv)
	if err != nil {
		return err
	}
	if warning != "" {
		x.Record.Warnings = append(x.Record.Warnings, warning)
		if x.OnEvent != nil {
			x.OnEvent(runner.Event{Kind: "warning", Text: warning})
		}
	}
	return nil
}
