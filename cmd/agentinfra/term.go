package main

import (
	"os"

	"golang.org/x/term"
)

func terminalInfo(f *os.File) (bool, int) {
	fd := int(f.Fd())
	if !term.IsTerminal(fd) {
		return false, 0
	}
	w, _, err := term.GetSize(fd)
	if err != nil {
		w = 100
	}
	return true, w
}
