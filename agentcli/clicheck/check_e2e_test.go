package clicheck

import (
	"context"
	"os"
	"testing"

	"github.com/agentinfra/agentinfra/internal/testing/e2etools"
	"github.com/agentinfra/agentinfra/runner"
)

// The pinned real CLIs pass the live protocol check, every step of it, at
// a version the tests pin.
func TestPinnedCLIsPassTheProtocolCheck(t *testing.T) {
	for _, cli := range runner.CLIs {
		t.Run(cli, func(t *testing.T) {
			bin := e2etools.Bin(t, cli)
			t.Parallel()
			f := Check(context.Background(), cli, bin, os.Getenv)
			t.Logf("%s %s: %d ms, steps %+v", cli, f.Version, f.TookMS, f.Steps)
			if !f.OK || !f.InRange || len(f.Steps) != 4 {
				t.Fatalf("%s: %+v", cli, f)
			}
		})
	}
}
