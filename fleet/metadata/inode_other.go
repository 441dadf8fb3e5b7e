//go:build !unix

package metadata

import "os"

func inodeOf(fi os.FileInfo) uint64 { return 0 }
