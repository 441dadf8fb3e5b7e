package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/internal/testing/testmatrix"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/task"
)

// BenchmarkTaskList runs `task list --status TODO` in-process (piped output)
// on generated matrices: read, parse, filter, print.
func BenchmarkTaskList(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			root := b.TempDir()
			if _, err := task.Init(context.Background(), root); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, ".agent", "DEVELOPMENT_MATRIX.md"), testmatrix.Generate(n, 1), 0o644); err != nil {
				b.Fatal(err)
			}
			f := &Factory{IO: &IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard}, Cwd: root,
				Now: time.Now, Getenv: func(string) string { return "" }}
			for b.Loop() {
				if code := run(context.Background(), []string{"task", "list", "--status", "TODO"}, f); code != 0 {
					b.Fatal(code)
				}
			}
		})
	}
}

// TestWriteBenchWorkspace writes a workspace with a 10,000-row matrix to
// $AGENTINFRA_BENCH_WS for whole-process timings (hyperfine); skipped otherwise.
//
//	AGENTINFRA_BENCH_WS=/tmp/ws10k go test ./cmd/agentinfra/internal/cli -run TestWriteBenchWorkspace
func TestWriteBenchWorkspace(t *testing.T) {
	dir := os.Getenv("AGENTINFRA_BENCH_WS")
	if dir == "" {
		t.Skip("set AGENTINFRA_BENCH_WS=DIR to write a 10,000-row benchmark workspace")
	}
	n := 10000
	if s := os.Getenv("AGENTINFRA_BENCH_ROWS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := task.Init(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	src := testmatrix.Generate(n, 1)
	if err := os.WriteFile(filepath.Join(dir, ".agent", "DEVELOPMENT_MATRIX.md"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	// A clean workspace, so validate's figures measure checking, not printing
	// thousands of warnings: the skills the rows name, and a folder for every
	// task that is IN_PROGRESS or REVIEW.
	for _, slug := range testmatrix.Skills {
		sd := filepath.Join(dir, ".agent", "skills", slug)
		if err := os.MkdirAll(sd, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sd, "SKILL.md"), []byte("---\nname: "+slug+"\ndescription: bench\n---\nBody\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, task := range matrix.Parse(src).Tasks() {
		if task.Status == "IN_PROGRESS" || task.Status == "REVIEW" {
			if err := os.MkdirAll(filepath.Join(dir, ".agent", "tasks", task.ID+"_bench"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Logf("wrote %s with %d rows; a row ID to update: %s", dir, n, testmatrix.ID(n/2))
}
