//go:build unix

package statefile

import "syscall"

// noFollow makes an open refuse a symbolic link (the lock files).
const noFollow = syscall.O_NOFOLLOW
