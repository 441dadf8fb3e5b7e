package matrix

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentinfra/agentinfra/internal/atomicfile"
)

// DefaultLockTimeout bounds how long a writer waits for another writer.
const DefaultLockTimeout = 10 * time.Second

// Store reads and writes one matrix file. Writers serialize on a sidecar lock
// file (the matrix itself is replaced by rename, so it cannot carry the lock);
// readers take no lock and, thanks to the atomic rename, never see a torn file.
type Store struct {
	Path        string
	LockTimeout time.Duration
	// Vocab is the workspace's vocabulary for Status, Pri and Diff (nil: the
	// default); task.OpenStore reads it from .agent/config.yaml.
	Vocab *Vocabulary
}

// NewStore returns a store for the matrix at path.
func NewStore(path string) *Store { return &Store{Path: path, LockTimeout: DefaultLockTimeout} }

// LockPath is the sidecar lock file next to the matrix.
func (s *Store) LockPath() string {
	return filepath.Join(filepath.Dir(s.Path), "."+filepath.Base(s.Path)+".lock")
}

// Load reads and parses the matrix without locking.
func (s *Store) Load(ctx context.Context) (*Doc, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	src, err := os.ReadFile(s.Path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("read matrix: %w; run `agentinfra init` to create one", err)
		}
		return nil, fmt.Errorf("read matrix: %w", err)
	}
	return ParseWith(src, s.Vocab), nil
}

// Modify runs fn on the current matrix under the lock and, if fn changed it,
// verifies and atomically replaces the file. If fn fails, or the result has
// more errors than before, nothing is written. A matrix that cannot be
// written is refused with ErrReadOnly before the lock is taken.
func (s *Store) Modify(ctx context.Context, fn func(d *Doc) error) (*Doc, error) {
	if err := s.checkWritable(); err != nil {
		return nil, err
	}
	unlock, err := s.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	src, err := os.ReadFile(s.Path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("read matrix: %w; run `agentinfra init` to create one", err)
		}
		return nil, fmt.Errorf("read matrix: %w", err)
	}
	d := ParseWith(src, s.Vocab)
	before := countErrors(d.diags)
	beforeMsgs := map[string]int{}
	for _, dg := range d.diags {
		if dg.Severity == SeverityError {
			beforeMsgs[dg.Message]++
		}
	}
	if err := fn(d); err != nil {
		return nil, err
	}
	if string(d.src) == string(src) {
		return d, nil
	}
	// Verify the bytes about to be written. Every Doc edit re-parses the
	// edited bytes (splice), so d already is Parse(d.src): parsing a third
	// time would add ~10 ms to an update of a 10,000-row matrix for nothing.
	check := d
	if after := countErrors(check.diags); after > before {
		// Name the new errors only: a real matrix may have many old ones.
		var msgs []string
		for _, dg := range check.Diagnostics() {
			if dg.Severity != SeverityError {
				continue
			}
			if beforeMsgs[dg.Message] > 0 {
				beforeMsgs[dg.Message]--
				continue
			}
			msgs = append(msgs, fmt.Sprintf("line %d: %s", dg.Line, dg.Message))
		}
		if len(msgs) == 0 { // the same messages, more of them
			for _, dg := range check.Diagnostics() {
				if dg.Severity == SeverityError {
					msgs = append(msgs, fmt.Sprintf("line %d: %s", dg.Line, dg.Message))
				}
			}
		}
		return nil, refusedf("the change would make the matrix invalid (%s); nothing was written", strings.Join(msgs, "; "))
	}
	target := s.Path
	if p, err := filepath.EvalSymlinks(s.Path); err == nil {
		target = p // replace a symlinked matrix's target, not the link
	}
	removeStaleTemps(target)
	if err := atomicfile.Write(target, d.src); err != nil {
		return nil, fmt.Errorf("write matrix: %w", err)
	}
	return d, nil
}

// removeStaleTemps deletes the temp files of writers that died before their
// rename (".NAME" plus digits, renameio's pattern). Only lock holders write
// temp files, so under the lock every one of them is garbage.
func removeStaleTemps(path string) {
	dir, prefix := filepath.Dir(path), "."+filepath.Base(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if ok && rest != "" && strings.Trim(rest, "0123456789") == "" && e.Type().IsRegular() {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

func (s *Store) lock(ctx context.Context) (func(), error) {
	timeout := s.LockTimeout
	if timeout <= 0 {
		timeout = DefaultLockTimeout
	}
	// A caller that has already given up touches nothing, not even the lock file.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// A blocking lock lets the kernel queue the waiters and wake one as soon
	// as the lock is free; polling with TryLock starves writers when many
	// processes contend. The wait runs in a goroutine so it can time out: if
	// it does, the goroutine releases the lock as soon as it gets it. The file
	// is opened here, not in the goroutine, so an abandoned wait never creates
	// it after this function has returned.
	lf, err := openLockFile(s.LockPath())
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", s.LockPath(), err)
	}
	got := make(chan error) // unbuffered: a send succeeds only while lock() still waits
	abandoned := make(chan struct{})
	go func() {
		err := lf.lock()
		select {
		case got <- err:
		case <-abandoned:
			lf.release()
		}
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case err := <-got:
		if err != nil {
			lf.release()
			return nil, fmt.Errorf("lock %s: %w", s.LockPath(), err)
		}
		return lf.release, nil
	case <-ctx.Done():
		close(abandoned)
		return nil, ctx.Err()
	case <-timer.C:
		close(abandoned)
		return nil, fmt.Errorf("%w after %s: %s is held by another agentinfra process; wait for it to finish, or remove the lock file if no agentinfra is running", ErrLockTimeout, timeout, s.LockPath())
	}
}

// CreateTask fills defaults into t: a fresh unique ID unless t.ID is set,
// status TODO, priority P2 and difficulty med unless given (with a
// vocabulary that lacks them: its first status, and its middle priority and
// difficulty), Created = Updated = today; it checks t and appends it to d.
// Run it inside Store.Modify (the task package does, with the task folder).
func (d *Doc) CreateTask(t Task, now time.Time) (Task, error) {
	t = t.clone()
	if t.ID == "" {
		id, err := d.NewID(now, nil, nil)
		if err != nil {
			return Task{}, err
		}
		t.ID = id
	}
	if t.Status == "" {
		t.Status = d.defaultValue(ColStatus, "TODO")
	}
	if t.Priority == "" {
		t.Priority = d.defaultValue(ColPri, "P2")
	}
	if t.Difficulty == "" {
		t.Difficulty = d.defaultValue(ColDiff, "med")
	}
	if t.Created == "" {
		t.Created = Today(now)
	}
	if t.Updated == "" {
		t.Updated = Today(now)
	}
	if strings.TrimSpace(t.Description) == "" {
		return Task{}, invalid("description", "", "a task needs a description", nil)
	}
	for _, a := range []struct {
		col string
		v   *string
	}{{ColStatus, &t.Status}, {ColPri, &t.Priority}, {ColDiff, &t.Difficulty}, {ColMode, &t.Mode}} {
		nv, err := d.normalizeValue(a.col, *a.v)
		if err != nil {
			return Task{}, err
		}
		*a.v = nv
	}
	for i, a := range t.Agents {
		m, err := NormalizeMention(a)
		if err != nil {
			return Task{}, err
		}
		t.Agents[i] = m
	}
	if err := d.AddTask(t); err != nil {
		return Task{}, err
	}
	created, _ := d.Task(t.ID)
	return created, nil
}

// defaultValue is preferred when the vocabulary allows it; else the first
// status, or the middle priority or difficulty (rounding to the higher one).
func (d *Doc) defaultValue(col, preferred string) string {
	v := d.vocab.orDefault()
	if c, ok := v.canonicalFor(col, preferred); ok {
		return c
	}
	vals := v.values[col]
	if col == ColStatus {
		return vals[0]
	}
	return vals[(len(vals)-1)/2]
}
