//go:build !linux

package matrix

import "os"

// exchange is Linux's renameat2 RENAME_EXCHANGE; elsewhere the store checks
// the file and then renames over it.
func exchange(*os.File, string, string) (supported bool, err error) { return false, nil }
