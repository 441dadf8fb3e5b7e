package matrix

import (
	"slices"
	"strings"
)

// The ready queue: an optional Deps column (header Deps, Depends on or
// Dependencies) lists, comma-separated, the IDs of the tasks a task waits
// for. A task is ready when it is TODO and every task it depends on is DONE.

// depsHeaders are the accepted names of the Deps column (case-insensitive).
var depsHeaders = []string{"deps", "depends on", "dependencies"}

// DepsOf returns the IDs a task depends on ("-" and blanks are none).
func DepsOf(t Task) []string {
	for k, v := range t.Extra {
		if slices.Contains(depsHeaders, strings.ToLower(strings.TrimSpace(k))) {
			var out []string
			for _, id := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == ';' }) {
				if id = strings.TrimSpace(id); id != "" && id != "-" && !slices.Contains(out, id) {
					out = append(out, id)
				}
			}
			return out
		}
	}
	return nil
}

// ReadyTasks returns the TODO tasks whose dependencies are all DONE, highest
// priority first, in file order within a priority. A dependency on an
// unknown ID is not DONE: such a task waits (validate reports the ID).
// TODO and DONE are v's words for them (nil: the default vocabulary).
func ReadyTasks(tasks []Task, v *Vocabulary) []Task {
	todo, errTodo := v.Status("TODO")
	done, errDone := v.Status("DONE")
	if errTodo != nil || errDone != nil {
		return nil // a vocabulary without them has no ready tasks
	}
	status := make(map[string]string, len(tasks))
	for _, t := range tasks {
		if _, seen := status[t.ID]; !seen {
			status[t.ID] = t.Status
		}
	}
	var out []Task
	for _, t := range tasks {
		if t.Status != todo {
			continue
		}
		ready := true
		for _, dep := range DepsOf(t) {
			if status[dep] != done {
				ready = false
				break
			}
		}
		if ready {
			out = append(out, t)
		}
	}
	slices.SortStableFunc(out, func(a, b Task) int { return v.ComparePriority(a.Priority, b.Priority) })
	return out
}

// readySet is the set of ready IDs of tasks when on, else nil. tasks must
// be every task of the matrix: a dependency's status decides.
func readySet(on bool, tasks []Task, v *Vocabulary) map[string]bool {
	if !on {
		return nil
	}
	out := map[string]bool{}
	for _, t := range ReadyTasks(tasks, v) {
		out[t.ID] = true
	}
	return out
}

// DependencyDiagnostics reports Deps that name no task and dependency
// cycles (each cycle once, at its first task's row).
func (d *Doc) DependencyDiagnostics() []Diagnostic {
	if !d.hasDepsColumn() {
		return nil // most matrices: no Task is built
	}
	tasks := d.Tasks()
	deps := map[string][]string{}
	var order []string
	for _, t := range tasks {
		if _, seen := deps[t.ID]; seen || t.ID == "" {
			continue
		}
		deps[t.ID] = DepsOf(t)
		order = append(order, t.ID)
	}
	var out []Diagnostic
	at := func(id string) int {
		if r := d.rowWithID(id); r != nil {
			return int(r.span.start)
		}
		return 0
	}
	for _, id := range order {
		for _, dep := range deps[id] {
			if _, ok := deps[dep]; !ok {
				out = append(out, d.diagAt(at(id), SeverityError, "task %s depends on %s, which is no task ID in the matrix; fix the Deps cell", id, dep))
			}
		}
	}
	// Depth-first search; a back edge closes a cycle.
	const (
		unseen = iota
		active
		done
	)
	state := map[string]int{}
	var stack []string
	var visit func(id string)
	visit = func(id string) {
		state[id] = active
		stack = append(stack, id)
		for _, dep := range deps[id] {
			if _, ok := deps[dep]; !ok {
				continue
			}
			switch state[dep] {
			case unseen:
				visit(dep)
			case active:
				i := slices.Index(stack, dep)
				cycle := append(slices.Clone(stack[i:]), dep)
				out = append(out, d.diagAt(at(dep), SeverityError, "dependency cycle: %s; no task of it can ever be ready, remove one of these Deps", strings.Join(cycle, " → ")))
			}
		}
		stack = stack[:len(stack)-1]
		state[id] = done
	}
	for _, id := range order {
		if state[id] == unseen {
			visit(id)
		}
	}
	return out
}

func (d *Doc) hasDepsColumn() bool {
	for _, t := range d.tables {
		for _, c := range t.cols {
			if t.isTask && slices.Contains(depsHeaders, strings.ToLower(c.name)) {
				return true
			}
		}
	}
	return false
}
