package task

import (
	"github.com/agentinfra/agentinfra/events"
	"github.com/agentinfra/agentinfra/workspace"
)

// publishChange tells the process's bus that a task changed (nothing when
// nothing did).
func publishChange(ws *workspace.Workspace, res UpdateResult, w stamp) {
	if len(res.Changed) == 0 {
		return
	}
	e := events.Event{Kind: events.TaskChanged, Root: ws.Root, Actor: string(w.by), TaskID: res.After.ID,
		Fields: res.Changed, Text: oneLine(w.reason)}
	if res.Before.Status != res.After.Status {
		e.Before, e.After = res.Before.Status, res.After.Status
	}
	events.Default().Publish(e)
}

// publishTask tells the bus that a task was created, scaffolded or
// archived (field names it).
func publishTask(ws *workspace.Workspace, id, field string, by Actor) {
	events.Default().Publish(events.Event{Kind: events.TaskChanged, Root: ws.Root, Actor: string(by), TaskID: id, Fields: []string{field}})
}
