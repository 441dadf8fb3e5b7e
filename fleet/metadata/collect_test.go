package metadata

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A Taskfile written the way people write them: flow and block style,
// comments, a task without desc, shorthand tasks, tasks that are not
// metadata.
const fullTasks = `  # what the fleet shows
  branch:
    desc: The branch checked out.
    meta: { include_in_list: true }
    cmds:
      - git rev-parse --abbrev-ref HEAD 2>/dev/null || echo detached
  pull_request_number:
    desc: The number of the pull request.
    meta:
      include_in_list: true
    cmds: [echo "  42  "]
  ci_status:
    meta: {}
    cmds:
      - echo green
      - echo "(2 checks)"
  notes:
    desc: ""
    meta:
    cmds: [printf '']
  build:
    desc: Not metadata.
    cmds: [echo never run]
  lint: echo shorthand, not metadata
`

func TestCollectFullMetadata(t *testing.T) {
	dir := workspaceWith(t, fullTasks)
	md := Collect(context.Background(), dir, AllFields, Options{TaskBinary: taskBin(t)})
	if md.Err != "" {
		t.Fatal(md.Err)
	}
	if got := strings.Join(md.Names, ","); got != "branch,pull_request_number,ci_status,notes" {
		t.Fatalf("fields %s, want the four meta tasks in file order", got)
	}
	want := map[string]struct {
		value, desc string
		list        bool
	}{
		"branch":              {"detached", "The branch checked out.", true},
		"pull_request_number": {"42", "The number of the pull request.", true},
		"ci_status":           {"green\n(2 checks)", NoDescription, false},
		"notes":               {"<nil>", NoDescription, false},
	}
	for name, w := range want {
		f := md.Fields[name]
		if val(f) != w.value || f.Error != nil || f.Schema.Description != w.desc || f.Schema.IncludeInList != w.list {
			t.Errorf("%s = value %q error %q schema %+v; want %q, no error, %q, include_in_list %v", name, val(f), errOf(f), f.Schema, w.value, w.desc, w.list)
		}
	}
	lv := md.ListValues()
	if len(lv) != 2 || *lv["pull_request_number"] != "42" || *lv["branch"] != "detached" {
		t.Fatalf("list values %v: want branch and pull_request_number only", lv)
	}
}

func TestCollectWithoutTaskfileHasNoFields(t *testing.T) {
	md := Collect(context.Background(), t.TempDir(), AllFields, Options{TaskBinary: "/nonexistent/task"})
	if md.Count() != 0 || md.Fields == nil || md.Err != "" || md.Taskfile != "" {
		t.Fatalf("no Taskfile: %+v, want no fields and no error", md)
	}
}

func TestCollectFindsGoTasksOtherNames(t *testing.T) {
	for _, name := range []string{"taskfile.yaml", "Taskfile.dist.yml"} {
		dir := t.TempDir()
		writeTaskfile(t, dir, name, "  who:\n    meta: {include_in_list: true}\n    cmds: [echo "+name+"]\n")
		md := Collect(context.Background(), dir, AllFields, Options{TaskBinary: taskBin(t)})
		if val(md.Fields["who"]) != name || md.Taskfile != filepath.Join(dir, name) {
			t.Errorf("%s: %+v", name, md)
		}
	}
}

func TestCollectPartialFailure(t *testing.T) {
	t.Parallel() // waits out a field's timeout or sleep, not the CPU
	dir := workspaceWith(t, `  ok:
    desc: Still works.
    meta: { include_in_list: true }
    cmds: [echo fine]
  fails:
    desc: Exits 3 with a message.
    meta: { include_in_list: true }
    cmds: ['echo "gh: not logged in" >&2; exit 3']
  hangs:
    desc: Never answers.
    meta: {}
    cmds: ['sh -c "sleep 60 & echo \$! > child.pid; wait"']
  bad_meta:
    desc: A list where a mapping belongs.
    meta: [include_in_list]
    cmds: [echo never run]
  bad_flag:
    meta: { include_in_list: "yes" }
    cmds: [echo never run]
`)
	md := Collect(context.Background(), dir, AllFields, Options{TaskBinary: taskBin(t), Timeout: slowFieldTimeout})
	if md.Count() != 5 || md.Err != "" {
		t.Fatalf("want 5 fields and no Taskfile error: %+v", md)
	}
	if f := md.Fields["ok"]; val(f) != "fine" || f.Error != nil {
		t.Errorf("ok: %q %q: one bad field must not spoil the others", val(f), errOf(f))
	}
	if f := md.Fields["fails"]; f.Value != nil || !strings.Contains(errOf(f), "gh: not logged in") || !strings.Contains(errOf(f), "exit status 3") {
		t.Errorf("fails: value %q error %q, want stderr's tail", val(f), errOf(f))
	}
	if f := md.Fields["hangs"]; f.Value != nil || !strings.Contains(errOf(f), "timed out after "+slowFieldTimeout.String()) {
		t.Errorf("hangs: value %q error %q, want a timeout", val(f), errOf(f))
	}
	if f := md.Fields["bad_meta"]; f.Value != nil || !strings.Contains(errOf(f), "malformed meta (line 18)") || f.Schema.Description != "A list where a mapping belongs." {
		t.Errorf("bad_meta: %+v %q", f, errOf(f))
	}
	if f := md.Fields["bad_flag"]; f.Value != nil || !strings.Contains(errOf(f), `include_in_list must be true or false, not "yes"`) {
		t.Errorf("bad_flag: %q", errOf(f))
	}
	if pid := readPid(t, filepath.Join(dir, "child.pid")); !pidGone(t, pid, 2*time.Second) {
		t.Errorf("the hanging field's child (pid %d) still runs: the group was not killed", pid)
	}
}

func TestCollectKillsWhatAFinishedFieldLeftBehind(t *testing.T) {
	dir := workspaceWith(t, `  quick:
    meta: {}
    cmds: ['sh -c "sleep 60 >/dev/null 2>&1 & echo \$! > left.pid"; echo done']
`)
	md := Collect(context.Background(), dir, AllFields, Options{TaskBinary: taskBin(t)})
	if f := md.Fields["quick"]; val(f) != "done" {
		t.Fatalf("quick: %q %q", val(f), errOf(f))
	}
	if pid := readPid(t, filepath.Join(dir, "left.pid")); !pidGone(t, pid, 2*time.Second) {
		t.Errorf("the background child (pid %d) outlived its field", pid)
	}
}

func TestCollectWithoutTaskCLI(t *testing.T) {
	dir := workspaceWith(t, "  a:\n    meta: {}\n    cmds: [echo a]\n  b:\n    meta: [x]\n")
	md := Collect(context.Background(), dir, AllFields, Options{TaskBinary: filepath.Join(t.TempDir(), "task")})
	if f := md.Fields["a"]; errOf(f) != ErrNoTaskCLI || f.Value != nil {
		t.Errorf("a: %q, want %q", errOf(f), ErrNoTaskCLI)
	}
	if f := md.Fields["b"]; !strings.Contains(errOf(f), "malformed meta") {
		t.Errorf("b: %q: a malformed field says so even without the CLI", errOf(f))
	}
}

func TestCollectUnreadableTaskfileSaysWhy(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "Taskfile.yml"), []byte("version: '3'\ntasks:\n  a:\n    meta: {\n"), 0o644)
	md := Collect(context.Background(), dir, AllFields, Options{TaskBinary: "/nonexistent"})
	if md.Count() != 0 || !strings.HasPrefix(md.Err, "Taskfile.yml: yaml: line") {
		t.Fatalf("%+v: want the parse error", md)
	}
}

func TestCollectCapsTheValue(t *testing.T) {
	dir := workspaceWith(t, "  big:\n    meta: {}\n    cmds: [yes é | head -c 100000]\n  small:\n    meta: {}\n    cmds: [echo é]\n")
	md := Collect(context.Background(), dir, AllFields, Options{TaskBinary: taskBin(t), MaxValueBytes: 4096})
	f := md.Fields["big"]
	if f.Value == nil || len(*f.Value) > 4096 || len(*f.Value) < 4000 || !strings.Contains(errOf(f), "cut to its first 4096 bytes") {
		t.Fatalf("big: %d bytes, error %q", len(val(f)), errOf(f))
	}
	if strings.ContainsRune(*f.Value, '\uFFFD') {
		t.Errorf("the cut split a character")
	}
	if val(md.Fields["small"]) != "é" || md.Fields["small"].Error != nil {
		t.Errorf("small: %+v", md.Fields["small"])
	}
}

func TestRunFieldWithoutStderrSaysTheExitCode(t *testing.T) {
	// A stand-in for go-task that fails without a word (go-task itself
	// always explains on stderr).
	bin := filepath.Join(t.TempDir(), "task")
	os.WriteFile(bin, []byte("#!/bin/sh\nexit 201\n"), 0o755)
	f := runField(context.Background(), bin, "Taskfile.yml", t.TempDir(), "x", Options{}.withDefaults())
	if errOf(f) != "exited with code 201" {
		t.Fatalf("%q", errOf(f))
	}
}

// go-task colours its own messages when CI=true (as in CI): an error value
// is plain text all the same.
func TestCollectErrorsAreTextEvenInCI(t *testing.T) {
	t.Setenv("CI", "true")
	dir := workspaceWith(t, `  fails:
    desc: Exits 1 with a message.
    meta: {}
    cmds: ['echo "no PR for this branch" >&2; exit 1']
`)
	md := Collect(context.Background(), dir, AllFields, Options{TaskBinary: taskBin(t)})
	f := md.Fields["fails"]
	if f.Error == nil || !strings.Contains(*f.Error, "no PR for this branch") || strings.ContainsRune(*f.Error, '\x1b') {
		t.Fatalf("error = %v; want the task's message without terminal colours", f.Error)
	}
}

// go-task runs with GOGC=400 (it then skips the collections of its package
// init), unless the environment or Options.Env says otherwise; the field's
// commands see the same.
func TestCollectRunsGoTaskWithGOGC400UnlessSet(t *testing.T) {
	dir := workspaceWith(t, `  gogc:
    meta: {}
    cmds: ['echo "GOGC=${GOGC-unset}"']
`)
	bin := taskBin(t)
	gogc := func(opts Options) string {
		t.Helper()
		opts.TaskBinary = bin
		f := Collect(context.Background(), dir, AllFields, opts).Fields["gogc"]
		if f.Error != nil {
			t.Fatal(*f.Error)
		}
		return val(f)
	}
	t.Setenv("GOGC", "") // restored after the test
	os.Unsetenv("GOGC")
	if got := gogc(Options{}); got != "GOGC=400" {
		t.Errorf("no GOGC set: the task saw %s, want GOGC=400", got)
	}
	if got := gogc(Options{Env: []string{"GOGC=off"}}); got != "GOGC=off" {
		t.Errorf("Options.Env GOGC=off: the task saw %s", got)
	}
	t.Setenv("GOGC", "150")
	if got := gogc(Options{}); got != "GOGC=150" {
		t.Errorf("the environment's GOGC=150: the task saw %s", got)
	}
}
