package matrix

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/gofrs/flock"

	"github.com/agentinfra/agentinfra/agenterr"
)

// lockFile is the sidecar lock, held through gofrs/flock (flock(2) on Unix,
// LockFileEx on Windows), plus a second descriptor on the same file for its
// record (lockRecord). The lock file is never followed if it is a symbolic
// link and must be a regular file: a link could make agentinfra create or
// lock a file anywhere.
type lockFile struct {
	path string
	fl   *flock.Flock
	rec  *os.File // the record; holding it open does not hold the lock
}

// openLockFile creates the lock file in the caller's goroutine: flock.Lock
// opens (and would create) the file only when the waiting goroutine runs, and
// a wait abandoned before then must not create it after the caller returned.
func openLockFile(path string) (*lockFile, error) {
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, notALockFile(path, fi.Mode())
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|noFollow, 0o644)
	if err != nil {
		if fi, lerr := os.Lstat(path); lerr == nil && !fi.Mode().IsRegular() {
			return nil, notALockFile(path, fi.Mode()) // it changed under us
		}
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err != nil {
			return nil, err
		}
		return nil, notALockFile(path, fi.Mode())
	}
	return &lockFile{path: path, rec: f, fl: flock.New(path, flock.SetFlag(os.O_CREATE|os.O_RDWR|noFollow))}, nil
}

// notALockFile refuses a lock path that is a symbolic link, a folder or
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
	return &agenterr.Error{Kind: agenterr.Refused, Err: ErrLockFile, Reason: fmt.Sprintf("the lock file %s %s; remove it (agentinfra creates a fresh one) and run the command again; nothing was changed", path, what)}
}

// ErrLockFile is a lock path that is not a lock file (a symbolic link, a folder).
var ErrLockFile = agenterr.New(agenterr.Refused, "bad lock file")

func (l *lockFile) lock() error {
	err := l.fl.Lock()
	if errors.Is(err, syscall.ELOOP) {
		return notALockFile(l.path, fs.ModeSymlink)
	}
	return err
}

func (l *lockFile) release() {
	_ = l.fl.Close()
	_ = l.rec.Close()
}

// lockRecord is what a writer holding the lock writes into the lock file:
// the state of its matrix write, so that the next writer can tell what a writer killed mid-write left:
// a temporary file holding the new version (never exchanged: removed) or the
// version it replaced (exchanged: kept as the previous version). It is not
// synced: losing it on a power cut only makes the next writer fall back to
// removing the temporary file.
type lockRecord struct {
	// Pending is the base name of the temporary file of a write in progress.
	Pending string `json:"pending,omitempty"`
	// NewIno is the inode of Pending once written, ReadIno the inode of the
	// matrix it replaces.
	NewIno  uint64 `json:"new_ino,omitempty"`
	ReadIno uint64 `json:"read_ino,omitempty"`
	// Prev is the previous version (.prev) as the write that displaced it
	// read it: a later change to it means that a program wrote into the old
	// file after it was replaced, and that edit is not in the matrix.
	Prev *fileStamp `json:"prev,omitempty"`
}

func (l *lockFile) readRecord() lockRecord {
	var r lockRecord
	b, err := io.ReadAll(io.NewSectionReader(l.rec, 0, 64<<10))
	if err == nil && len(b) > 0 {
		_ = json.Unmarshal(b, &r) // an empty or foreign lock file is no record
	}
	return r
}

func (l *lockFile) writeRecord(r lockRecord) {
	b, _ := json.Marshal(r)
	b = append(b, '\n')
	if _, err := l.rec.WriteAt(b, 0); err == nil {
		_ = l.rec.Truncate(int64(len(b)))
	}
}
