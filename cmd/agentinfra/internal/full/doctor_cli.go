package full

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentinfra/agentinfra/agentcli/clicheck"
	"github.com/agentinfra/agentinfra/runner"
)

// cliChecks are doctor's checks of the agent CLIs: one per CLI, each the
// live protocol check of clicheck against an in-process fake model.
func cliChecks() []DoctorCheck {
	var out []DoctorCheck
	for _, name := range runner.CLIs {
		out = append(out, DoctorCheck{Name: "cli " + name, Run: func(ctx context.Context, o *DoctorOptions) Finding { return checkCLI(ctx, o, name) }})
	}
	return out
}

// checkCLI: a CLI not found warns (agentinfra runs the others); one that
// fails the protocol check fails (a supervised run of it is refused); one
// outside the tested versions that passes warns.
func checkCLI(ctx context.Context, o *DoctorOptions, name string) Finding {
	c := clicheck.Check(ctx, name, "", o.Getenv)
	f := Finding{CLI: &c}
	switch {
	case !c.Found:
		f.Status, f.Detail = DoctorWarn, "not found: "+c.Problem
		f.Fix = fmt.Sprintf("install %s %s (scripts/install-tools.sh), or leave it: the other CLIs work without it", clicheck.Tested[name].Package, c.Tested)
	case !c.OK:
		f.Status = DoctorFail
		f.Detail = fmt.Sprintf("%s %s at %s failed the protocol check: %s", name, orDash(c.Version), c.Path, c.Problem)
		f.Fix = fmt.Sprintf("a supervised run of %s is refused until it passes; install a tested version (%s)", name, c.Tested)
	case !c.InRange:
		f.Status = DoctorWarn
		f.Detail = fmt.Sprintf("%s %s at %s passed the protocol check (%s) in %d ms, but is not a tested version (%s)", name, c.Version, c.Path, stepNames(c.Steps), c.TookMS, c.Tested)
		f.Fix = fmt.Sprintf("supervised runs go ahead with a warning; install %s %s for the tested one", clicheck.Tested[name].Package, clicheck.Tested[name].Max)
	default:
		f.Status = DoctorOK
		f.Detail = fmt.Sprintf("%s %s at %s (tested: %s) passed the protocol check (%s) in %d ms", name, c.Version, c.Path, c.Tested, stepNames(c.Steps), c.TookMS)
	}
	return f
}

func stepNames(steps []clicheck.Step) string {
	var names []string
	for _, s := range steps {
		names = append(names, s.Name)
	}
	return strings.Join(names, ", ")
}
