// Package metadata collects an agent's workspace metadata: the tasks of the
// workspace's Taskfile that carry a `meta:` key, each run with the real
// go-task binary, its output the field's value.
//
//	tasks:
//	  pull_request_number:
//	    desc: The number of the pull request.
//	    meta: { include_in_list: true }
//	    cmds: [gh pr view --json number --jq .number]
//
// go-task ignores `meta` (and `task --list --json` does not print it), so
// the Taskfile's top-level tasks are read here with yaml.v3. Each field runs
// as `task --taskfile PATH NAME --silent` in the workspace, in its own
// process group, killed as a group when it outlives its timeout. Nothing
// here fails: a field that cannot be read or run carries an error instead
// of a value, and the others still work.
//
// Collect is the whole collection of one workspace, with no state: what a
// remote workspace can serve as an endpoint. A Collector adds what a server
// needs: agents collected in parallel, and results cached briefly per
// workspace, dropped when its Taskfile changes.
package metadata
