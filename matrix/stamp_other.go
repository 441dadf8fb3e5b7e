//go:build !unix

package matrix

import "os"

const noFollow = 0

func stampOf(fi os.FileInfo) fileStamp {
	return fileStamp{Size: fi.Size(), MtimeNS: fi.ModTime().UnixNano()}
}

func ownerOf(os.FileInfo) (uid, gid int, ok bool) { return 0, 0, false }

func userName(uid int) string { return "" }
