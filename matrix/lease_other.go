//go:build !linux

package matrix

import "os"

// Leases are Linux's: elsewhere the store compares what it read instead.
func takeReadLease(*os.File) leaseState { return leaseNone }
func leaseBroken(*os.File) bool         { return false }
func releaseLease(*os.File)             {}
