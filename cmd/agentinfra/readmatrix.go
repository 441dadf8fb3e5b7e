package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/agentinfra/agentinfra/workspace"
)

// readMatrixMapped reads the workspace's matrix for a read-only command, with
// the messages of scaffold's reader; large files are mapped (readFileMapped).
func readMatrixMapped(ctx context.Context, ws *workspace.Workspace) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	src, err := readFileMapped(ws.MatrixPath())
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("read matrix: %w; run `agentinfra init` to create one", err)
		}
		return nil, fmt.Errorf("read matrix: %w", err)
	}
	return src, nil
}
