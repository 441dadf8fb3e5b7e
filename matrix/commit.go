package matrix

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// errChangedUnderUs: the matrix changed between the read and the replace;
// Modify reads it again and runs the edit again.
var errChangedUnderUs = errors.New("the matrix changed while it was written")

// noExchange, set by tests, makes exchange report no support, so that the
// fallback (check, then rename) is tested on Linux too.
var noExchange bool

// testHookBeforeExchange, when set, runs after the last check and just
// before the new file is swapped in (the moment an editor's save is lost to
// a plain rename), with the file that was read.
var testHookBeforeExchange func(read *os.File)

// tmpInfix marks agentinfra's temporary files next to the matrix:
// .DEVELOPMENT_MATRIX.md.tmp-DIGITS. Nothing else is ever removed.
const tmpInfix = ".tmp-"

// writer is one Modify holding the lock.
type writer struct {
	s      *Store
	target string
	lf     *lockFile
	rec    lockRecord
}

// replace puts data in place of the snapshot's file, keeping the file's
// owner and mode, and keeps the file it replaced as the previous version.
//
// The new file is swapped in with one atomic exchange of names (Linux's
// renameat2 RENAME_EXCHANGE), so whatever was at the matrix's name at that
// instant comes out under the temporary name, never unlinked. If that is
// not the file that was read (an editor renamed its save over the matrix
// after the last check), or another program has started to open the old
// file to write into it (the lease is being broken), the exchange is undone
// and errChangedUnderUs makes Modify start again from the new content.
// Without the exchange (other systems, some file systems) the last check is
// followed by a plain rename: an editor's rename in between those two calls
// is the one window left (see docs/matrix-format.md).
func (w *writer) replace(sn *snapshot, data []byte) error {
	dir, base := filepath.Dir(w.target), filepath.Base(w.target)
	df, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer df.Close()
	tmpName := "." + base + tmpInfix + randDigits()
	tmp := filepath.Join(dir, tmpName)
	// Prev goes until the new previous version is in place: a record that
	// outlives its file could name an inode number the system reuses.
	w.rec.Pending, w.rec.NewIno, w.rec.ReadIno, w.rec.Prev = tmpName, 0, sn.stamp.Ino, nil
	w.lf.writeRecord(w.rec)
	newStamp, err := writeNew(tmp, data, sn)
	if err != nil {
		_ = os.Remove(tmp)
		w.clearPending()
		return err
	}
	w.rec.NewIno = newStamp.Ino
	w.lf.writeRecord(w.rec)
	if sn.changedAt(w.target) {
		_ = os.Remove(tmp)
		w.clearPending()
		return errChangedUnderUs
	}
	if testHookBeforeExchange != nil {
		testHookBeforeExchange(sn.f)
	}
	supported, err := exchange(df, tmpName, base)
	if err != nil {
		_ = os.Remove(tmp)
		w.clearPending()
		return err
	}
	if !supported {
		return w.renameOver(df, sn, tmp)
	}
	// tmp now holds what was at the matrix's name a moment ago.
	displaced, err := os.Lstat(tmp)
	raced := err != nil || stampOf(displaced).Ino != sn.stamp.Ino
	if !raced {
		if sn.lease == leaseHeld {
			raced = leaseBroken(sn.f)
		} else if fi, err := sn.f.Stat(); err != nil || stampOf(fi) != sn.stamp {
			raced = true
		}
	}
	if raced {
		return w.undoExchange(df, tmpName, base, newStamp)
	}
	releaseLease(sn.f) // a program waiting to open the old file goes on now
	prev := prevPathOf(w.target)
	if err := os.Rename(tmp, prev); err != nil {
		w.s.notify("the previous version of the matrix could not be kept as %s: %v", prev, err)
		_ = os.Remove(tmp)
	}
	if err := df.Sync(); err != nil {
		return err
	}
	stamp := sn.stamp
	w.rec.Pending, w.rec.NewIno, w.rec.ReadIno, w.rec.Prev = "", 0, 0, &stamp
	w.lf.writeRecord(w.rec)
	return nil
}

// undoExchange swaps the names back after a race: the other program's file
// returns to the matrix's name, and this write's file, back at the
// temporary name, is removed. Should yet another file have arrived in
// between, it is kept aside, never removed.
func (w *writer) undoExchange(df *os.File, tmpName, base string, ours fileStamp) error {
	dir := filepath.Dir(w.target)
	tmp := filepath.Join(dir, tmpName)
	if _, err := exchange(df, tmpName, base); err != nil {
		aside := w.keepAside(tmp)
		w.clearPending()
		return fmt.Errorf("another program changed the matrix while agentinfra wrote it, and its version could not be put back (%v): it is in %s; compare it with the matrix", err, aside)
	}
	if fi, err := os.Lstat(tmp); err == nil {
		if stampOf(fi).Ino == ours.Ino {
			_ = os.Remove(tmp)
		} else {
			aside := w.keepAside(tmp)
			w.s.notify("the matrix changed several times while agentinfra wrote it; one version was kept in %s: compare it with the matrix", aside)
		}
	}
	w.clearPending()
	_ = df.Sync()
	return errChangedUnderUs
}

// renameOver is replace without an exchange: keep the file that was read as
// the previous version (a hard link), check once more, rename over.
func (w *writer) renameOver(df *os.File, sn *snapshot, tmp string) error {
	dir, base := filepath.Dir(w.target), filepath.Base(w.target)
	link := filepath.Join(dir, "."+base+tmpInfix+randDigits())
	linked := os.Link(w.target, link) == nil
	if linked {
		if fi, err := os.Lstat(link); err != nil || stampOf(fi).Ino != sn.stamp.Ino {
			_ = os.Remove(link)
			linked = false
		}
	}
	if sn.changedAt(w.target) {
		_ = os.Remove(tmp)
		if linked {
			_ = os.Remove(link)
		}
		w.clearPending()
		return errChangedUnderUs
	}
	if err := os.Rename(tmp, w.target); err != nil {
		_ = os.Remove(tmp)
		if linked {
			_ = os.Remove(link)
		}
		w.clearPending()
		return err
	}
	if linked {
		_ = os.Rename(link, prevPathOf(w.target))
	}
	if err := df.Sync(); err != nil {
		return err
	}
	stamp := sn.stamp
	w.rec.Pending, w.rec.NewIno, w.rec.ReadIno, w.rec.Prev = "", 0, 0, nil
	if linked {
		w.rec.Prev = &stamp
	}
	w.lf.writeRecord(w.rec)
	return nil
}

func (w *writer) clearPending() {
	w.rec.Pending, w.rec.NewIno, w.rec.ReadIno = "", 0, 0
	w.lf.writeRecord(w.rec)
}

// writeNew writes the new version to a new file, with the owner, group and
// mode of the file it replaces: a write as root (sudo, an agent container
// on a bind mount) leaves the matrix its owner's. As another user the owner
// cannot be given away; the group is kept when this user is in it.
func writeNew(path string, data []byte, sn *snapshot) (fileStamp, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|noFollow, 0o600)
	if err != nil {
		return fileStamp{}, err
	}
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		return fileStamp{}, err
	}
	if sn.owned && (sn.uid != os.Geteuid() || sn.gid != os.Getegid()) {
		uid := sn.uid
		if os.Geteuid() != 0 {
			uid = -1
		}
		_ = f.Chown(uid, sn.gid)
	}
	if err := f.Chmod(sn.mode.Perm()); err != nil {
		return fileStamp{}, err
	}
	if err := f.Sync(); err != nil {
		return fileStamp{}, err
	}
	fi, err := f.Stat()
	if err != nil {
		return fileStamp{}, err
	}
	return stampOf(fi), f.Close()
}

// recover deals, under the lock, with what an earlier writer left: the
// temporary file of a writer killed mid-write (removed if it holds the new
// version that never went in; kept as the previous version if the exchange
// had happened), a previous version that a program wrote into after it was
// replaced (kept aside, and said), and stray temporary files.
func (w *writer) recover() {
	dir, base := filepath.Dir(w.target), filepath.Base(w.target)
	before := w.rec
	defer func() {
		if w.rec != before {
			w.lf.writeRecord(w.rec)
		}
	}()
	if p := w.rec.Pending; p != "" && isTempName(base, p) {
		tmp := filepath.Join(dir, p)
		if fi, err := os.Lstat(tmp); err == nil && fi.Mode().IsRegular() {
			cur, cerr := os.Lstat(w.target)
			exchanged := w.rec.NewIno != 0 && cerr == nil && stampOf(cur).Ino == w.rec.NewIno
			switch {
			case !exchanged:
				_ = os.Remove(tmp) // the new version of a write that never happened
			case stampOf(fi).Ino == w.rec.ReadIno:
				stamp := stampOf(fi)
				if os.Rename(tmp, prevPathOf(w.target)) == nil {
					w.rec.Prev = &stamp
				}
			default:
				aside := w.keepAside(tmp)
				w.s.notify("a write of the matrix was interrupted just as another program changed it; that program's version is in %s: compare it with the matrix", aside)
			}
		}
		w.rec.Pending, w.rec.NewIno, w.rec.ReadIno = "", 0, 0
	}
	if p := w.rec.Prev; p != nil {
		fi, err := os.Lstat(prevPathOf(w.target))
		switch {
		case err != nil || stampOf(fi).Ino != p.Ino || stampOf(fi).Dev != p.Dev:
			w.rec.Prev = nil // not the file the record names
		case stampOf(fi) != *p:
			aside := w.keepAside(prevPathOf(w.target))
			w.s.notify("a program wrote into the matrix's old file after agentinfra had replaced it (an editor saving in place as agentinfra wrote): that edit is not in the matrix; it is kept in %s: compare it with the matrix and copy over what is missing", aside)
			w.rec.Prev = nil
		}
	}
	removeStaleTemps(dir, base)
}

// keepAside renames path to .NAME.recovered-DATE-N next to the matrix and
// returns the new path (path itself if the rename failed).
func (w *writer) keepAside(path string) string {
	dir, base := filepath.Dir(w.target), filepath.Base(w.target)
	stamp := time.Now().Format("20060102-150405")
	for i := 1; i < 1000; i++ {
		p := filepath.Join(dir, "."+base+".recovered-"+stamp+"-"+strconv.Itoa(i))
		if _, err := os.Lstat(p); err == nil {
			continue
		}
		if os.Rename(path, p) == nil {
			return p
		}
		break
	}
	return path
}

// removeStaleTemps deletes the temporary files of writers that died before
// their rename: agentinfra's own (.NAME.tmp-DIGITS) and those of earlier
// versions (.NAME plus digits, renameio's pattern), regular files only, in
// the matrix's folder (inside the workspace). Only lock holders write them,
// so under the lock every one of them is garbage.
func removeStaleTemps(dir, base string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.Type().IsRegular() && isTempName(base, e.Name()) {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

func isTempName(base, name string) bool {
	rest, ok := strings.CutPrefix(name, "."+base)
	if !ok {
		return false
	}
	rest = strings.TrimPrefix(rest, tmpInfix)
	return rest != "" && strings.Trim(rest, "0123456789") == ""
}

func randDigits() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return strconv.FormatUint(binary.LittleEndian.Uint64(b[:])%1e12, 10)
}
