package cli

import (
	"os"
	"strconv"

	"golang.org/x/term"
)

// terminalInfo tells whether f is a terminal and, if so, its width: $COLUMNS
// when it holds a positive number (as for ls), else the terminal's own, else 100.
func terminalInfo(f *os.File, getenv func(string) string) (bool, int) {
	fd := int(f.Fd())
	if !term.IsTerminal(fd) {
		return false, 0
	}
	if n, err := strconv.Atoi(getenv("COLUMNS")); err == nil && n > 0 {
		return true, n
	}
	w, _, err := term.GetSize(fd)
	if err != nil || w <= 0 {
		w = 100
	}
	return true, w
}
