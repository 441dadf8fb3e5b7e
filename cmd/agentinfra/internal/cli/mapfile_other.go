//go:build !unix

package cli

import "os"

func readFileMapped(path string) ([]byte, error) { return os.ReadFile(path) }

func mappedFault(r any) (error, bool) { return nil, false }
