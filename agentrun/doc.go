// Package agentrun is the one place an agent CLI runs for agentinfra: for a
// matrix task or a free-text instruction, in phases that its two callers
// string together — dispatch (synchronous, in the caller's process) and the
// fleet's supervisor (`agentinfra agent supervise`, detached):
//
//   - plan: the caller decides the prompt; ChooseModel is the one model
//     rule;
//   - claim: Claim takes the matrix task for the run's agent through the
//     task lifecycle (task.ClaimWith; task.Release gives it back when the
//     run never started);
//   - exec: Run.Exec starts the CLI through an Executor (Headless: the
//     runner's one-shot headless mode; the supervision issue's bridges,
//     which speak each CLI's own protocol over stdin/stdout, plug in here)
//     inside a contained scope (package contain: no process the agent
//     started outlives the run), and keeps every event the CLI prints as
//     the run's log and publishes it on the bus;
//   - record: one Record format for both callers, kept by a Recorder
//     (Files: the record as JSON next to its log as JSONL; the supervision
//     issue moves them into SQLite behind the same interface);
//   - finish: Conclude sets the run's end from the CLI's result and
//     FinishTask moves the task on (REVIEW, or BLOCKED with the reason)
//     through the task lifecycle.
//
// ReadLog and FollowLog read a run's log, live or finished (`agent logs`,
// the MCP show_agent_logs tool).
package agentrun
