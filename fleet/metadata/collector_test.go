package metadata

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// countingTasks is a field that counts its runs in runs.log.
const countingTasks = "  runs:\n    meta: {}\n    cmds: ['echo run >> runs.log; wc -l < runs.log']\n"

func TestCollectorCachesUntilTheTTL(t *testing.T) {
	dir := workspaceWith(t, countingTasks)
	c := NewCollector(Options{TaskBinary: taskBin(t), CacheTTL: time.Minute})
	clock := time.Now()
	c.now = func() time.Time { return clock }
	ctx := context.Background()
	if v := val(c.Collect(ctx, dir, AllFields).Fields["runs"]); v != "1" {
		t.Fatalf("first: %q", v)
	}
	if v := val(c.Collect(ctx, dir, AllFields).Fields["runs"]); v != "1" {
		t.Fatalf("second, within the TTL: %q, want the cached 1", v)
	}
	clock = clock.Add(time.Minute)
	if v := val(c.Collect(ctx, dir, AllFields).Fields["runs"]); v != "2" {
		t.Fatalf("after the TTL: %q, want a new run", v)
	}
}

func TestCollectorDropsTheCacheWhenTheTaskfileChanges(t *testing.T) {
	dir := workspaceWith(t, countingTasks)
	c := NewCollector(Options{TaskBinary: taskBin(t), CacheTTL: time.Hour})
	ctx := context.Background()
	c.Collect(ctx, dir, AllFields)
	// Same size, new content and mtime: an edit that keeps the length.
	path := filepath.Join(dir, "Taskfile.yml")
	b, _ := os.ReadFile(path)
	os.WriteFile(path, []byte(strings.Replace(string(b), "echo run", "echo RUN", 1)), 0o644)
	later := time.Now().Add(2 * time.Second)
	os.Chtimes(path, later, later)
	if v := val(c.Collect(ctx, dir, AllFields).Fields["runs"]); v != "2" {
		t.Fatalf("after the edit: %q, want a new run", v)
	}
	// A new field appears at once.
	os.WriteFile(path, append(b, "  extra:\n    meta: {}\n    cmds: [echo new]\n"...), 0o644)
	if md := c.Collect(ctx, dir, AllFields); val(md.Fields["extra"]) != "new" {
		t.Fatalf("the new field is missing: %+v", md.Names)
	}
	// Replaced by rename (a new inode, as editors and git do), mtime kept.
	fi, _ := os.Stat(path)
	tmp := filepath.Join(dir, "new.yml")
	os.WriteFile(tmp, append(b, "  other:\n    meta: {}\n    cmds: [echo other]\n"...), 0o644)
	os.Chtimes(tmp, fi.ModTime(), fi.ModTime())
	os.Rename(tmp, path)
	if md := c.Collect(ctx, dir, AllFields); val(md.Fields["other"]) != "other" {
		t.Fatalf("the renamed Taskfile was not read again: %+v", md.Names)
	}
	os.Remove(path)
	if md := c.Collect(ctx, dir, AllFields); md.Count() != 0 {
		t.Fatalf("the Taskfile is gone: %+v", md)
	}
}

func TestCollectorSharesOneCollectionBetweenConcurrentCalls(t *testing.T) {
	dir := workspaceWith(t, "  slow:\n    meta: {}\n    cmds: ['echo run >> runs.log; sleep 0.5; wc -l < runs.log']\n")
	c := NewCollector(Options{TaskBinary: taskBin(t)})
	var wg sync.WaitGroup
	vals := make([]string, 10)
	for i := range vals {
		wg.Add(1)
		go func() {
			defer wg.Done()
			vals[i] = val(c.Collect(context.Background(), dir, AllFields).Fields["slow"])
		}()
	}
	wg.Wait()
	for _, v := range vals {
		if v != "1" {
			t.Fatalf("values %v: ten concurrent calls must share one run", vals)
		}
	}
}

func TestCollectorAnswersACanceledCallerAtOnce(t *testing.T) {
	t.Parallel() // waits out a field's timeout or sleep, not the CPU
	dir := workspaceWith(t, "  slow:\n    meta: {}\n    cmds: [sleep 2, echo late]\n")
	c := NewCollector(Options{TaskBinary: taskBin(t)})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	md := c.Collect(ctx, dir, AllFields)
	if !strings.Contains(md.Err, "not collected") {
		t.Fatalf("a canceled caller: %+v", md)
	}
	// The collection went on and the next caller gets it.
	if v := val(c.Collect(context.Background(), dir, AllFields).Fields["slow"]); v != "late" {
		t.Fatalf("next caller: %q", v)
	}
}

func TestCollectAllRunsWorkspacesInParallel(t *testing.T) {
	t.Parallel() // waits out a field's timeout or sleep, not the CPU
	bin := taskBin(t)
	// Each of the 8 fields (2 in each of 4 workspaces) marks its arrival,
	// then waits until all 8 have arrived: collected in parallel they all
	// pass the barrier; collected one at a time the first one waits alone
	// until its timeout, and its value is an error.
	barrier := t.TempDir()
	field := func(ws int, name, last string) string {
		return "  " + name + ":\n    meta: {}\n    cmds:\n" +
			"      - touch " + barrier + "/" + strconv.Itoa(ws) + "-" + name + "\n" +
			"      - 'n=0; while [ $(ls " + barrier + " | wc -l) -lt 8 ] && [ $n -lt 600 ]; do sleep 0.05; n=$((n+1)); done; [ $(ls " + barrier + " | wc -l) -ge 8 ]'\n" +
			"      - " + last + "\n"
	}
	var dirs []string
	for i := range 4 {
		dirs = append(dirs, workspaceWith(t, field(i, "a", "pwd")+field(i, "b", "echo b")))
	}
	dirs = append(dirs, t.TempDir()) // no Taskfile
	c := NewCollector(Options{TaskBinary: bin, Timeout: 40 * time.Second})
	out := c.CollectAll(context.Background(), dirs, AllFields)
	for i, d := range dirs[:4] {
		if got := val(out[i].Fields["a"]); got != d {
			t.Errorf("workspace %d: a = %q (%+v), want it run in %s: the fields did not all run at once", i, got, out[i].Fields["a"], d)
		}
		if got := val(out[i].Fields["b"]); got != "b" {
			t.Errorf("workspace %d: b = %q (%+v): the fields did not all run at once", i, got, out[i].Fields["b"])
		}
	}
	if out[4].Count() != 0 {
		t.Errorf("no Taskfile: %+v", out[4])
	}
	if n, _ := os.ReadDir(barrier); len(n) != 8 {
		t.Errorf("%d fields arrived at the barrier, want 8", len(n))
	}
}
