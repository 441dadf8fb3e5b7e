//go:build unix

package prompt

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentinfra/agentinfra/agenterr"
)

// Issue 18, item 10: a FIFO given as a context file hung the request forever
// (no writer ever opens this one). Only regular files are read.
func TestContextFileFIFOIsRefused(t *testing.T) {
	ws, doc := promptFixture(t)
	if err := syscall.Mkfifo(filepath.Join(ws.Root, "src", "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Assemble(context.Background(), ws, Input{Task: mustTask(t, doc, "a1b2c3"), ContextFiles: []string{"src/pipe"}, Getenv: noEnv})
	if agenterr.KindOf(err) != agenterr.Invalid || !strings.Contains(err.Error(), `context_files "src/pipe": it is not a regular file`) {
		t.Fatalf("err = %v, want the FIFO refused", err)
	}
}
