package full

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
	"github.com/agentinfra/agentinfra/contain"
	"github.com/agentinfra/agentinfra/supervision"
)

// DoctorOptions is what `doctor` runs with.
type DoctorOptions struct {
	IO     *cli.IOStreams
	Getenv func(string) string
	// Checks are the checks to run, in order (nil = DoctorChecks).
	Checks []DoctorCheck
	// Hosts are the hosts of the workspace's supervised agents on Coder
	// (doctor_hosts.go).
	Hosts func(context.Context) ([]supervision.HostEntry, []string)

	JSON bool
}

// DoctorCheck is one thing doctor looks at.
type DoctorCheck struct {
	Name string
	Run  func(ctx context.Context, o *DoctorOptions) Finding
}

// Finding is what a check found.
type Finding struct {
	Check  string `json:"check"`
	Status string `json:"status"` // ok, warn (agentinfra works, with less), fail
	Detail string `json:"detail"`
	// Fix says what to do about a warn or a fail.
	Fix string `json:"fix,omitempty"`
}

// Statuses of a finding.
const (
	DoctorOK   = "ok"
	DoctorWarn = "warn"
	DoctorFail = "fail"
)

// DoctorChecks are doctor's checks: what contains an agent's processes on
// this machine. Later issues add their own (the agent CLIs).
var DoctorChecks = []DoctorCheck{
	{"landlock", checkLandlock},
	{"mount-namespace", checkMountNamespace},
	{"agent-environment", checkAgentEnvironment},
	{"coder-hosts", checkCoderHosts},
}

func NewCmdDoctor(f *Factory, runF func(context.Context, *DoctorOptions) error) *cobra.Command {
	o := &DoctorOptions{IO: f.IO, Getenv: f.Getenv, Hosts: f.workspaceHosts}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check what this machine offers to contain and supervise agents",
		Long: `Check what this machine offers to contain and supervise agents: Landlock (an agent's
processes write only in its folder, the temporary folders and its CLI's own, and cannot see
.agent/state or your agentinfra config), a mount namespace (how a folder inside the agent's
own is hidden), and the environment agents get. A warning means agentinfra runs with less
protection; the line says what to do. Exit code 1 when a check fails.`,
		Example: `  agentinfra doctor
  agentinfra doctor --json | jq '.findings[] | select(.status != "ok")'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return doctorRun(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print {findings, ok} as JSON")
	return cmd
}

func doctorRun(ctx context.Context, o *DoctorOptions) error {
	checks := o.Checks
	if checks == nil {
		checks = DoctorChecks
	}
	var findings []Finding
	failed := 0
	for _, c := range checks {
		f := c.Run(ctx, o)
		f.Check = c.Name
		if f.Status == DoctorFail {
			failed++
		}
		findings = append(findings, f)
	}
	if o.JSON {
		if err := cli.WriteJSON(o.IO.Out, struct {
			Findings []Finding `json:"findings"`
			OK       bool      `json:"ok"`
		}{findings, failed == 0}); err != nil {
			return err
		}
	} else {
		tw := tabwriter.NewWriter(o.IO.Out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "STATUS\tCHECK\tDETAIL")
		for _, f := range findings {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", f.Status, f.Check, f.Detail)
			if f.Fix != "" {
				fmt.Fprintf(tw, "\t\tfix: %s\n", f.Fix)
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if failed > 0 {
		return agenterr.New(agenterr.Unavailable, fmt.Sprintf("%d check(s) failed", failed))
	}
	return nil
}

func checkLandlock(context.Context, *DoctorOptions) Finding {
	s := contain.Supported()
	if s.ABI == 0 {
		return Finding{Status: DoctorWarn, Detail: "no Landlock: " + s.Why + "; supervised agents' processes may write anywhere you may and read the supervision database",
			Fix: "run a kernel with Landlock (Linux 5.13+, CONFIG_SECURITY_LANDLOCK, landlock in the lsm= boot parameter)"}
	}
	return Finding{Status: DoctorOK, Detail: fmt.Sprintf("Landlock ABI %d: a supervised agent's processes write only in its folder, the temporary folders and its CLI's own, and cannot read .agent/state or your agentinfra config", s.ABI)}
}

func checkMountNamespace(context.Context, *DoctorOptions) Finding {
	s := contain.Supported()
	switch {
	case s.ABI == 0:
		return Finding{Status: DoctorWarn, Detail: "not used without Landlock"}
	case !s.Mount:
		return Finding{Status: DoctorWarn, Detail: "no mount namespace (user namespaces are disabled or denied): a folder to hide inside the agent's own (.agent/state when dispatch runs in the workspace) is hidden by Landlock alone, and the agent cannot create entries in the folders that lead to it",
			Fix: "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu kernel.apparmor_restrict_unprivileged_userns=0), or run supervised agents in the fleet's worktrees"}
	}
	return Finding{Status: DoctorOK, Detail: "a folder to hide inside the agent's own is covered by an empty one in the agent's own mount namespace"}
}

func checkAgentEnvironment(_ context.Context, o *DoctorOptions) Finding {
	path := contain.UserConfigDir(o.Getenv)
	if r := contain.UserEnvRules(o.Getenv); r.Env == contain.EnvAllowlist {
		return Finding{Status: DoctorOK, Detail: fmt.Sprintf("allowlist (%s/%s): agents get %v, what every program and their CLI need, and nothing else", path, contain.AllowlistFile, r.PassEnv)}
	}
	return Finding{Status: DoctorOK, Detail: fmt.Sprintf("inherit: agents get your environment without agentinfra's credentials (%v); supervision.env: allowlist in %s/%s passes only what you list",
		contain.Credentials, path, contain.AllowlistFile)}
}
