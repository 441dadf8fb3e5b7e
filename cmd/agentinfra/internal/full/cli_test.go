package full

import (
	"testing"

	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
	"github.com/agentinfra/agentinfra/internal/testing/clitest"
	"github.com/agentinfra/agentinfra/internal/testing/testbin"
)

// The harness of package clitest, bound to this package's entry point:
// runCLI(t, dir, cliOpts{...}, args...) runs `agentinfra args...` in-process
// in dir, as main does (a pinned clock, taskNow; a private environment;
// buffers for the streams) and returns its exit code, stdout and stderr.

type cliOpts = clitest.Opts

var taskNow = clitest.Now

// factoryOf is the Factory of an in-process run.
func factoryOf(p *clitest.Process) *Factory {
	return &Factory{&cli.Factory{
		IO:     &cli.IOStreams{In: p.Stdin, Out: p.Stdout, ErrOut: p.Stderr, IsTTY: p.TTY, Width: p.Width},
		Cwd:    p.Dir,
		Now:    p.Now,
		Getenv: p.Getenv,
	}}
}

var harness = clitest.New(factoryOf, run)

var (
	runCLI               = harness.Run
	testFactory          = harness.Factory
	fixtureWS            = harness.FixtureWS
	rowsWS               = harness.RowsWS
	readText             = clitest.ReadText
	matrixOf             = clitest.MatrixOf
	gitApply             = clitest.GitApply
	newValidateWorkspace = clitest.ValidateWS
)

// taskBinary is agentinfra, with agentinfra-full beside it (it hands this
// package's commands over to the full binary there), built for the tests
// that need real processes (package testbin: once per source tree).
func taskBinary(t *testing.T) string { return testbin.Path(t, testbin.Agentinfra) }
