// Package atomicfile is agentinfra's one way to replace a file: a temporary
// file in the same folder (renameio's ".NAME" plus digits), fsync, rename over
// the target, then fsync the folder so the rename itself survives a crash. A
// reader sees the old bytes or the new ones, never a mix. It takes no lock:
// callers that must not lose each other's writes hold one (matrix.Store).
package atomicfile

import (
	"os"
	"path/filepath"
	"syscall"

	"github.com/google/renameio/v2"
)

// Write replaces path with data, keeping the mode of an existing file (0644
// for a new one) and, when run as root, its owner and group: a write by
// sudo or an agent container on a bind mount leaves the file its owner's.
func Write(path string, data []byte) error {
	dir := filepath.Dir(path)
	pf, err := renameio.NewPendingFile(path, renameio.WithTempDir(dir), renameio.WithExistingPermissions(), renameio.WithPermissions(0o644))
	if err != nil {
		return err
	}
	defer pf.Cleanup()
	if _, err := pf.Write(data); err != nil {
		return err
	}
	if fi, err := os.Stat(path); err == nil && os.Geteuid() == 0 {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && (st.Uid != 0 || st.Gid != 0) {
			_ = pf.Chown(int(st.Uid), int(st.Gid))
		}
	}
	if err := pf.CloseAtomicallyReplace(); err != nil {
		return err
	}
	df, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer df.Close()
	return df.Sync()
}
