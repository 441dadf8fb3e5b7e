package execute

import (
	"context"
	"os"
	"strings"

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
	warning, err := clicheck.Require(ctx, x.Record.CLI, x.Request.Binary, x.cliGetenv())
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

// cliGetenv is the environment the run's CLI will see, as the check reads
// it: the request's own variables first, then the run's, and this
// process's PATH when neither names one (the CLI inherits it): a check
// run without PATH finds no node and fails a CLI that works.
func (x *execution) cliGetenv() func(string) string {
	getenv := x.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	own := map[string]string{}
	for _, kv := range x.Request.Env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			own[k] = v
		}
	}
	return func(k string) string {
		if v, ok := own[k]; ok {
			return v
		}
		if v := getenv(k); v != "" || k != "PATH" {
			return v
		}
		return os.Getenv("PATH")
	}
}
