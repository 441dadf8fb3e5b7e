package metadata

import "os"

// taskGOGC is the GOGC go-task runs with when the environment sets none.
// go-task allocates about 5 MB in its package init (chroma's lexers and
// styles); at Go's default of 100 that is 3 collections before main, a third
// of the ~30 ms of CPU a field's go-task spends (perf stat, go-task v3.54.0
// built with go-runewidth v0.0.31: 31 ms → 20 ms per process). At 400 the
// first collection is due at 16 MB, which a metadata field does not reach.
// The task's commands inherit it, as they inherit the rest of go-task's
// environment: a Go program among them lets its heap grow to 5× its live
// data between collections instead of 2×.
const taskGOGC = "GOGC=400"

// taskEnv is the environment of a field's go-task: the process's own, then
// ours, then extra (Options.Env; of two equal keys the last one counts).
func taskEnv(extra []string) []string {
	// go-task colours its own messages when it thinks it runs in CI
	// (CI=true): a value or an error is plain text.
	env := append(os.Environ(), "TASK_COLOR=false", "NO_COLOR=1")
	if _, set := os.LookupEnv("GOGC"); !set {
		env = append(env, taskGOGC)
	}
	return append(env, extra...)
}
