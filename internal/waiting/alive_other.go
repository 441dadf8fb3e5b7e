//go:build !unix

package waiting

// alive cannot ask the system here: a marker counts while it exists.
func alive(pid int) bool { return pid > 0 }
