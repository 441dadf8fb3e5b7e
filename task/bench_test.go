package task

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/agentinfra/agentinfra/internal/testing/testmatrix"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/workspace"
)

// benchWS is an initialized workspace whose matrix has n generated rows.
func benchWS(b *testing.B, n int) *workspace.Workspace {
	b.Helper()
	dir := b.TempDir()
	if _, err := Init(context.Background(), dir); err != nil {
		b.Fatal(err)
	}
	ws, _ := workspace.New(dir)
	if err := os.WriteFile(ws.MatrixPath(), testmatrix.Generate(n, 1), 0o644); err != nil {
		b.Fatal(err)
	}
	return ws
}

func BenchmarkCreateTask(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			ws := benchWS(b, n)
			ctx := context.Background()
			for b.Loop() {
				if _, _, err := createTask(ctx, ws, CreateOptions{Description: "Benchmark task", Mode: "coder"}, now); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkUpdateTask(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			ws := benchWS(b, n)
			ctx := context.Background()
			id := testmatrix.ID(n / 2)
			statuses := []string{"IN_PROGRESS", "REVIEW"}
			i := 0
			for b.Loop() {
				i++
				if _, err := UpdateTask(ctx, ws, id, matrix.Update{Status: matrix.Str(statuses[i%2])}, now, UpdateOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
