// Package statefile is how the fleet's backends keep their state in files
// that several processes share: each change under a lock file (WithLock,
// refused with a 503 after LockTimeout), a record replaced atomically as
// JSON (WriteJSON), a history appended line by line and synced, a torn last
// line set aside first (AppendLine, ReadLines).
package statefile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/internal/atomicfile"
	"github.com/agentinfra/agentinfra/internal/jsonout"
)

// LockTimeout bounds a wait for a lock.
const LockTimeout = 30 * time.Second

// WithLock runs fn holding the lock file at path. A lock path that is not
// a regular file (a folder, a symbolic link: flock would fail on the one and
// follow the other anywhere) is refused at once, saying so: no agentinfra
// process can be holding it.
func WithLock(ctx context.Context, path string, fn func() error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return notALockFile(path, fi.Mode())
	}
	fl := flock.New(path, flock.SetFlag(os.O_CREATE|os.O_RDONLY|noFollow))
	lctx, cancel := context.WithTimeout(ctx, LockTimeout)
	defer cancel()
	ok, err := fl.TryLockContext(lctx, 5*time.Millisecond)
	switch {
	case ok:
	case err != nil && lctx.Err() == nil:
		// Not a wait that ran out: the file could not be opened or locked.
		if fi, serr := os.Lstat(path); serr == nil && !fi.Mode().IsRegular() {
			return notALockFile(path, fi.Mode()) // it changed under us
		}
		return agenterr.Unavailablef(err, "could not lock %s", path)
	case ctx.Err() != nil:
		return agenterr.Unavailablef(ctx.Err(), "gave up waiting for the lock %s", path)
	default:
		return agenterr.Unavailablef(err, "could not lock %s within %s: another agentinfra process has held it all that time; nothing was changed: try again (the lock is released when its holder ends, so never remove the file)", path, LockTimeout)
	}
	defer fl.Unlock()
	return fn()
}

// notALockFile refuses a lock path that is a folder, a symbolic link or
// anything but a regular file. Removing it is safe: only a regular file can
// be locked, so no agentinfra process holds it.
func notALockFile(path string, m fs.FileMode) error {
	what := "is not a regular file"
	switch {
	case m&fs.ModeSymlink != 0:
		what = "is a symbolic link, which agentinfra does not follow (it could point anywhere)"
	case m.IsDir():
		what = "is a folder"
	}
	return agenterr.Unavailablef(nil, "the lock file %s %s: remove it (agentinfra creates a fresh one) and run the command again; nothing was changed", path, what)
}

func WriteJSON(path string, v any) error {
	b, err := jsonout.Marshal(v)
	if err != nil {
		return err
	}
	return atomicfile.Write(path, b)
}

// ReadJSON reads path into v; ok is false when the file does not exist.
func ReadJSON(path string, v any) (ok bool, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	return true, nil
}

// AppendLine appends one JSON line and syncs it: the history is
// append-only. A last line without its newline (a write cut short: a crash
// mid-write, a full disk) would swallow this one, both then one line that
// does not parse: it is set aside first, appended to path+".torn" (synced),
// and the file cut back to its last whole line. torn says so ("" when the
// file was whole), for the caller to report.
func AppendLine(path string, v any) (torn string, err error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if torn, err = setTornLineAside(f, path); err != nil {
		return "", err
	}
	_, err = f.Write(append(b, '\n'))
	if serr := f.Sync(); err == nil {
		err = serr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return torn, err
}

// TornSuffix names where AppendLine sets a torn last line aside.
const TornSuffix = ".torn"

// setTornLineAside moves a last line that has no newline out of f (open on
// path) into path+TornSuffix.
func setTornLineAside(f *os.File, path string) (string, error) {
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return "", err
	}
	size := fi.Size()
	var last [1]byte
	if _, err := f.ReadAt(last[:], size-1); err != nil {
		return "", err
	}
	if last[0] == '\n' {
		return "", nil
	}
	// Find the start of the torn line: just after the last newline.
	cut := int64(0)
	buf := make([]byte, 64<<10)
	for end := size; end > 0; {
		start := max(0, end-int64(len(buf)))
		n, err := f.ReadAt(buf[:end-start], start)
		if err != nil && !errors.Is(err, io.EOF) {
			return "", err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			cut = start + int64(i) + 1
			break
		}
		end = start
	}
	frag := make([]byte, size-cut)
	if _, err := f.ReadAt(frag, cut); err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	if json.Valid(frag) {
		// Whole but for its newline (cut just before it): it is a record.
		_, err := f.Write([]byte{'\n'})
		return "", err
	}
	aside := path + TornSuffix
	af, err := os.OpenFile(aside, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return "", err
	}
	_, err = af.Write(append(frag, '\n'))
	if serr := af.Sync(); err == nil {
		err = serr
	}
	if cerr := af.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("set the torn last line of %s aside: %w", path, err)
	}
	if err := f.Truncate(cut); err != nil {
		return "", err
	}
	return fmt.Sprintf("the last line of %s was torn (%d bytes without an end: a write cut short by a crash or a full disk); set it aside in %s so that it swallows no record",
		path, len(frag), filepath.Base(aside)), nil
}

// ReadLines decodes every JSON line of path. A last line without its
// newline is skipped: a crash in the middle of an append, or an append
// under way (the next append sets it aside).
func ReadLines[T any](path string) ([]T, error) {
	out, _, err := ReadLinesReport[T](path)
	return out, err
}

// ReadLinesReport is ReadLines that also returns the numbers (from 1) of
// the whole lines that are no JSON record of T: a person's edit, or an
// older agentinfra's torn line that the next append ran into.
func ReadLinesReport[T any](path string) ([]T, []int, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var out []T
	var bad []int
	for n := 1; len(b) > 0; n++ {
		line, rest, whole := bytes.Cut(b, []byte{'\n'})
		b = rest
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var v T
		if json.Unmarshal(line, &v) != nil {
			if whole {
				bad = append(bad, n)
			}
			continue
		}
		out = append(out, v)
	}
	return out, bad, nil
}
