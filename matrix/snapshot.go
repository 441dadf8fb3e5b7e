package matrix

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/agentinfra/agentinfra/agenterr"
)

// fileStamp identifies a version of a file without reading it.
type fileStamp struct {
	Dev     uint64 `json:"dev,omitempty"`
	Ino     uint64 `json:"ino,omitempty"`
	Size    int64  `json:"size"`
	MtimeNS int64  `json:"mtime_ns"`
}

type leaseState int

const (
	leaseNone leaseState = iota // no lease on this system, file system or file
	leaseHeld                   // nobody has the file open for writing, nor can open it without waiting
	leaseBusy                   // another process has the file open for writing
)

// settleTime is how long a matrix that ends in the middle of a row must stay
// unchanged before a writer without a lease trusts it: an editor that saves
// in place writes the file in pieces, and a read between two of them sees
// the file cut.
const settleTime = 2 * time.Second

// noLease, set by tests, makes the store work as it does where it gets no
// lease (another user's file, a file system without leases).
var noLease bool

// testHookWaiting, when set, is told each time a writer waits for the file.
var testHookWaiting func(why string)

// snapshot is the matrix as a writer read it: the open file (holding the
// read lease, when there is one), its stamp and its bytes.
type snapshot struct {
	f     *os.File
	stamp fileStamp
	mode  fs.FileMode
	uid   int
	gid   int
	owned bool // uid and gid are known
	src   []byte
	lease leaseState
}

func (sn *snapshot) close() { _ = sn.f.Close() }

// readSnapshot reads the matrix once it is safe to: not while another
// program has it open for writing (lease), nor while it changes under the
// read, nor, without a lease, while it ends in the middle of a row and was
// changed within settleTime. It gives up at deadline, refusing the change.
func readSnapshot(ctx context.Context, path string, deadline time.Time) (*snapshot, error) {
	wait := 5 * time.Millisecond
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		sn, why, err := tryReadSnapshot(path)
		if err != nil || why == "" {
			return sn, err
		}
		if testHookWaiting != nil {
			testHookWaiting(why)
		}
		if time.Now().After(deadline) {
			return nil, &agenterr.Error{Kind: agenterr.Conflict, Err: ErrConcurrentEdit, Reason: fmt.Sprintf("%s %s; nothing was written; run the command again once the other program has saved it", path, why)}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 100*time.Millisecond)
	}
}

// tryReadSnapshot reads the file once; why says what to wait for instead.
func tryReadSnapshot(path string) (sn *snapshot, why string, err error) {
	f, err := os.OpenFile(path, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return nil, "", readErr(err)
	}
	lease := leaseNone
	if !noLease {
		lease = takeReadLease(f)
	}
	if lease == leaseBusy {
		f.Close()
		return nil, "is open for writing by another program (an editor saving it?) and was not closed in time", nil
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, "", readErr(err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, "", fmt.Errorf("read matrix: %s is not a regular file", path)
	}
	src, err := readAllAt(f, fi.Size())
	if err != nil {
		f.Close()
		return nil, "", readErr(err)
	}
	fi2, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, "", readErr(err)
	}
	sn = &snapshot{f: f, stamp: stampOf(fi2), mode: fi2.Mode(), src: src, lease: lease}
	sn.uid, sn.gid, sn.owned = ownerOf(fi2)
	if stampOf(fi) != sn.stamp || int64(len(src)) != fi2.Size() {
		f.Close()
		return nil, "kept changing while it was read", nil
	}
	if lease != leaseHeld {
		// Nothing stops a writer: read again (a save of the same size within
		// one tick of the file system's clock leaves the stamp as it was),
		// and do not trust a file cut in the middle of a row that changed a
		// moment ago.
		if !sameBytes(f, src) {
			f.Close()
			return nil, "kept changing while it was read", nil
		}
		if looksCut(src) && time.Since(fi2.ModTime()) < settleTime {
			f.Close()
			return nil, fmt.Sprintf("ends in the middle of a row (line %d) and was still being written", bytes.Count(src, []byte("\n"))+1), nil
		}
	}
	return sn, "", nil
}

// readAllAt reads the whole file from offset 0, whatever its size now.
func readAllAt(f *os.File, size int64) ([]byte, error) {
	buf := make([]byte, 0, size+512)
	for off := int64(0); ; {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.ReadAt(buf[len(buf):cap(buf)], off)
		buf, off = buf[:len(buf)+n], off+int64(n)
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// looksCut reports whether src looks cut off by a save in progress: empty
// (truncated, not yet written), or ending inside a table row (its last line,
// with no line ending, starts with '|').
func looksCut(src []byte) bool {
	if len(src) == 0 {
		return true
	}
	if src[len(src)-1] == '\n' {
		return false
	}
	last := bytes.TrimLeft(src[bytes.LastIndexByte(src, '\n')+1:], " \t")
	return len(last) > 0 && last[0] == '|'
}

// changedAt reports whether path is no longer the file of the snapshot, as
// it was read: another file renamed there, other bytes, or (with a lease)
// another program starting to open it for writing.
func (sn *snapshot) changedAt(path string) bool {
	fi, err := os.Lstat(path)
	if err != nil || stampOf(fi) != sn.stamp {
		return true
	}
	if sn.lease == leaseHeld && leaseBroken(sn.f) {
		return true
	}
	return !sameBytes(sn.f, sn.src)
}

// sameBytes reports whether f holds exactly want, reading it in pieces (a
// second copy of a large matrix would cost as much as its read).
func sameBytes(f *os.File, want []byte) bool {
	buf := make([]byte, 64<<10)
	off := 0
	for {
		n, err := f.ReadAt(buf, int64(off))
		if n > len(want)-off || !bytes.Equal(buf[:n], want[off:off+n]) {
			return false
		}
		off += n
		if err == io.EOF {
			return off == len(want)
		}
		if err != nil {
			return false
		}
	}
}
