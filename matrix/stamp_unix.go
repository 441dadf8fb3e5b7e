//go:build unix

package matrix

import (
	"os"
	"os/user"
	"strconv"
	"syscall"
)

const noFollow = syscall.O_NOFOLLOW

// stampOf is what identifies a version of a file without reading it.
func stampOf(fi os.FileInfo) fileStamp {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileStamp{Size: fi.Size(), MtimeNS: fi.ModTime().UnixNano()}
	}
	return fileStamp{Dev: uint64(st.Dev), Ino: uint64(st.Ino), Size: fi.Size(), MtimeNS: fi.ModTime().UnixNano()}
}

// ownerOf returns the file's owner and group (ok false when unknown).
func ownerOf(fi os.FileInfo) (uid, gid int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return int(st.Uid), int(st.Gid), true
}

// userName is the login name of uid, or its number.
func userName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		return u.Username
	}
	return strconv.Itoa(uid)
}
