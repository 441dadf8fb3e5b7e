package full

import (
	"context"
	"time"

	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
)

// KeepMovingOptions is what answer, steer, checkpoint and the session
// watchdog / purge commands run with.
type KeepMovingOptions struct {
	IO  *cli.IOStreams
	Env func(context.Context) (*supervisionEnv, error)
	Now func() time.Time

	Args   []string
	Label  string
	Force  bool
	DryRun bool
	Older  int
	JSON   bool
}

func (f *Factory) keepMovingOptions() *KeepMovingOptions {
	return &KeepMovingOptions{IO: f.IO, Env: f.supervision, Now: f.Now}
}
