// Package agentrun holds the parts of a run of an agent CLI — for a matrix
// task or a free-text instruction — that package execute strings together
// for its two callers, dispatch (synchronous, in the caller's process) and
// the fleet's supervisor (`agentinfra agent run-supervisor`, detached):
//
//   - model: ChooseModel is the one model rule;
//   - exec: Run.Exec starts the CLI through an Executor (Headless: the
//     runner's one-shot headless mode; a supervised run's session runs it
//     through the CLI's bridge) inside a contained scope (package contain:
//     no process the agent started outlives the run), and keeps every event
//     the CLI prints as the run's log and publishes it on the bus;
//   - record: one Record format for both callers, kept by a Recorder
//     (Files: the record as JSON next to its log as JSONL; Stored: a row of
//     the store's runs table);
//   - finish: Conclude sets the run's end from the CLI's result and
//     FinishTask moves the task on (REVIEW, or BLOCKED with the reason)
//     through the task lifecycle (package task, which claims it too).
//
// ReadLog and FollowLog read a run's log, live or finished (`agent logs`,
// the MCP show_agent_logs tool).
package agentrun
