// Command agentinfra manages a repository's .agent/ directory: the task matrix,
// task folders, skills, agent modes, prompts, dispatch, and the MCP server.
//
// This binary links what the light commands need (task, validate, prompt,
// skill, mode, model, init, hook, migrate...); the commands that reach the
// supervision database, the MCP SDK, Slack or the web console are listed
// here and run by agentinfra-full (./agentinfra-full), which this one
// replaces itself with (execve). See internal/cli's full_binary.go.
package main

import (
	"os"
	"runtime"

	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
)

// init keeps the main goroutine, which runs the command and so the exec
// of agentinfra-full (execve), on the main thread. Linux runs an execve
// from another thread by first ending the thread-group leader, and while it
// does, /proc/PID/stat shows the process as a zombie: the fleet's reaper
// (and the store's) would take a supervisor in its exec of agentinfra-full
// for dead and interrupt its run. From the leader the exec has no such moment.
func init() { runtime.LockOSThread() }

func main() { os.Exit(cli.Main(nil)) }
