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

	"github.com/agentinfra/agentinfra/agenterr"
)

// DefaultLockTimeout bounds how long a writer waits for another writer.
const DefaultLockTimeout = 10 * time.Second

// Store reads and writes one matrix file. Writers serialize on a sidecar lock
// file (the matrix itself is replaced by rename, so it cannot carry the lock);
// readers take no lock and, thanks to the atomic rename, never see a torn file
// of agentinfra's.
//
// People edit the matrix too, with editors that take no lock: a write checks,
// just before it replaces the file, that the file is still the one it read
// (see Modify), and keeps the version it replaced as the previous version
// (PrevPath), so that no edit, agentinfra's or a person's, is lost for good.
type Store struct {
	Path        string
	LockTimeout time.Duration
	// Vocab is the workspace's vocabulary for Status, Pri and Diff (nil: the
	// default); task.OpenStore reads it from .agent/config.yaml.
	Vocab *Vocabulary
	// Root is the workspace root: a matrix that resolves outside it (through
	// a symbolic link) is refused. "" checks nothing.
	Root string
	// Notify receives what a write noticed and did not stop it (a leftover
	// of a writer that was killed, an edit that went into the previous
	// version); nil drops them.
	Notify func(msg string)
	// LockCreated, when set, is called with the lock file's path after a
	// lock that created it (it did not exist): task.OpenStore keeps it out
	// of `git status` (workspace.HideFromGit).
	LockCreated func(lockPath string)
}

// NewStore returns a store for the matrix at path.
func NewStore(path string) *Store { return &Store{Path: path, LockTimeout: DefaultLockTimeout} }

// ErrOutsideWorkspace is a matrix that resolves outside its workspace.
var ErrOutsideWorkspace = agenterr.New(agenterr.Refused, "matrix outside the workspace")

// ErrConcurrentEdit is a write given up because another program kept
// changing the matrix (an editor saving it) while agentinfra wrote it.
var ErrConcurrentEdit = agenterr.New(agenterr.Conflict, "the matrix was being changed by another program")

// Target is the file the store reads and writes: Path with symbolic links
// resolved (Path itself when it does not exist yet). A target outside Root
// is refused with a Refused *agenterr.Error matching ErrOutsideWorkspace.
func (s *Store) Target() (string, error) {
	p, err := filepath.EvalSymlinks(s.Path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return s.Path, nil // the read says how to create one
		}
		return "", fmt.Errorf("read matrix: %w", err)
	}
	if s.Root == "" {
		return p, nil
	}
	root, err := filepath.EvalSymlinks(s.Root)
	if err != nil {
		return "", fmt.Errorf("workspace root: %w", err)
	}
	if rel, err := filepath.Rel(root, p); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", &agenterr.Error{Kind: agenterr.Refused, Err: ErrOutsideWorkspace, Reason: fmt.Sprintf(
			"the matrix %s is a symbolic link to %s, outside the workspace %s; agentinfra reads and writes only files inside it: replace the link with the file (or a link inside the workspace); nothing was changed",
			s.Path, p, root)}
	}
	return p, nil
}

// LockPath is the sidecar lock file next to the matrix (next to the file a
// symbolically linked matrix resolves to, so that every path to one file
// takes one lock).
func (s *Store) LockPath() string { return lockPathOf(s.resolvedOrPath()) }

// PrevPath is the previous version of the matrix: the file as it was before
// the last write, kept by every write (see Restore).
func (s *Store) PrevPath() string { return prevPathOf(s.resolvedOrPath()) }

func (s *Store) resolvedOrPath() string {
	if p, err := filepath.EvalSymlinks(s.Path); err == nil {
		return p
	}
	return s.Path
}

func lockPathOf(target string) string {
	return filepath.Join(filepath.Dir(target), "."+filepath.Base(target)+".lock")
}

func prevPathOf(target string) string {
	return filepath.Join(filepath.Dir(target), "."+filepath.Base(target)+".prev")
}

// Load reads and parses the matrix without locking.
func (s *Store) Load(ctx context.Context) (*Doc, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	target, err := s.Target()
	if err != nil {
		return nil, err
	}
	src, err := os.ReadFile(target)
	if err != nil {
		return nil, readErr(err)
	}
	return ParseWith(src, s.Vocab), nil
}

func readErr(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read matrix: %w; run `agentinfra init` to create one", err)
	}
	return fmt.Errorf("read matrix: %w", err)
}

// maxAttempts bounds how often Modify runs fn again on a file that another
// program changed under it (the lock timeout bounds the time).
const maxAttempts = 50

// Modify runs fn on the current matrix under the lock and, if fn changed it,
// verifies and atomically replaces the file. If fn fails, or the result has
// more errors than before, nothing is written. A matrix that cannot be
// written is refused with ErrReadOnly before the lock is taken.
//
// The lock keeps agentinfra's writers apart; a person's editor takes none.
// So the read waits while another program has the file open for writing (an
// editor saving in place: the file could be half written) or while it ends
// in the middle of a row and was changed a moment ago, and just before the
// replace Modify checks that the file is still the one it read (its inode,
// size, modification time and bytes). If it is not (an editor saved it in
// the meantime), fn runs again on the new content: fn may therefore run more
// than once, and must undo a side effect of an earlier run before it
// repeats it. After maxAttempts, or at the lock timeout, the change is
// refused (ErrConcurrentEdit) and nothing is written.
func (s *Store) Modify(ctx context.Context, fn func(d *Doc) error) (*Doc, error) {
	return s.ModifyThen(ctx, fn, nil)
}

// ModifyThen is Modify with finish run under the lock at the end, with the
// outcome: err is nil once the new matrix is in place (or fn changed
// nothing), else what failed (fn's error, a refusal, a failed write). A
// change that spans the matrix and other files ends there, so that no other
// writer ever sees it half done: it removes its record of the change, or
// undoes its other files. d is the matrix as fn left it (nil when fn failed).
// finish's error is returned when there was none.
func (s *Store) ModifyThen(ctx context.Context, fn func(d *Doc) error, finish func(d *Doc, err error) error) (*Doc, error) {
	return s.modify(ctx, fn, finish, true)
}

func (s *Store) modify(ctx context.Context, fn func(d *Doc) error, finish func(d *Doc, err error) error, verify bool) (*Doc, error) {
	target, err := s.Target()
	if err != nil {
		return nil, err
	}
	if err := s.checkWritable(target); err != nil {
		return nil, err
	}
	lf, err := s.lock(ctx, target)
	if err != nil {
		return nil, err
	}
	defer lf.release()
	w := &writer{s: s, target: target, lf: lf, rec: lf.readRecord()}
	w.recover()
	done := func(d *Doc, err error) (*Doc, error) {
		if finish != nil {
			if ferr := finish(d, err); err == nil {
				err = ferr
			}
		}
		if err != nil {
			return nil, err
		}
		return d, nil
	}
	// Waiting for an editor to finish gets its own timeout.
	deadline := time.Now().Add(s.timeout())
	for attempt := 1; ; attempt++ {
		snap, err := readSnapshot(ctx, target, deadline)
		if err != nil {
			return done(nil, err)
		}
		d, changed, err := s.apply(snap.src, fn, verify)
		if err != nil || !changed {
			snap.close()
			return done(d, err)
		}
		err = w.replace(snap, d.src)
		snap.close()
		if errors.Is(err, errChangedUnderUs) {
			if attempt < maxAttempts && time.Now().Before(deadline) {
				// Let the other program finish its burst of saves.
				time.Sleep(time.Duration(min(attempt, 10)) * time.Millisecond)
				continue
			}
			return done(d, &agenterr.Error{Kind: agenterr.Conflict, Err: ErrConcurrentEdit, Reason: fmt.Sprintf(
				"%s changed %d times while agentinfra was writing it (an editor saving it?); nothing was written; run the command again once the other program has saved",
				s.Path, attempt)})
		}
		if err != nil {
			return done(d, fmt.Errorf("write matrix: %w", err))
		}
		return done(d, nil)
	}
}

// apply parses src, runs fn and, when verify is set, refuses a result with
// more errors than before. changed is false when fn left the bytes alone.
func (s *Store) apply(src []byte, fn func(d *Doc) error, verify bool) (d *Doc, changed bool, err error) {
	if verify {
		if err := unfinishedMerge(src); err != nil {
			return nil, false, err
		}
	}
	d = ParseWith(src, s.Vocab)
	before := countErrors(d.diags)
	beforeMsgs := map[string]int{}
	for _, dg := range d.diags {
		if dg.Severity == SeverityError {
			beforeMsgs[dg.Message]++
		}
	}
	if err := fn(d); err != nil {
		return nil, false, err
	}
	if string(d.src) == string(src) {
		return d, false, nil
	}
	if !verify {
		return d, true, nil
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
		return nil, false, refusedf("the change would make the matrix invalid (%s); nothing was written", strings.Join(msgs, "; "))
	}
	return d, true, nil
}

func (s *Store) timeout() time.Duration {
	if s.LockTimeout <= 0 {
		return DefaultLockTimeout
	}
	return s.LockTimeout
}

func (s *Store) notify(format string, a ...any) {
	if s.Notify != nil {
		s.Notify(fmt.Sprintf(format, a...))
	}
}

func (s *Store) lock(ctx context.Context, target string) (*lockFile, error) {
	timeout := s.timeout()
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
	path := lockPathOf(target)
	_, statErr := os.Lstat(path)
	lf, err := openLockFile(path)
	if err != nil {
		if agenterr.As(err) != nil {
			return nil, err
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if s.LockCreated != nil && errors.Is(statErr, fs.ErrNotExist) {
		s.LockCreated(path)
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
			if agenterr.As(err) != nil {
				return nil, err
			}
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		return lf, nil
	case <-ctx.Done():
		close(abandoned)
		return nil, ctx.Err()
	case <-timer.C:
		close(abandoned)
		// With flock the kernel releases the lock of a process that dies, so
		// the lock file never needs removing; removing it would let a second
		// writer in beside a live one.
		return nil, fmt.Errorf("%w after %s: another agentinfra process holds the lock on %s (a lock whose holder died is released by the system; do not remove the lock file); wait for it to finish and run the command again, or wait longer with %s=1m",
			ErrLockTimeout, timeout, path, "AGENTINFRA_LOCK_TIMEOUT")
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
