package matrix

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/agentinfra/agentinfra/internal/testing/testmatrix"
)

var benchSizes = []int{1000, 10000}

// Figures (go test ./matrix -run x -bench . -benchmem) are in README.md.

func BenchmarkParse(b *testing.B) {
	for _, n := range benchSizes {
		src := testmatrix.Generate(n, 1)
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			for b.Loop() {
				if d := Parse(src); len(d.Diagnostics()) != 0 {
					b.Fatal(d.Diagnostics()[0])
				}
			}
		})
	}
}

// BenchmarkFilteredList is `task list --status TODO` minus the printing:
// parse, build the tasks, filter.
func BenchmarkFilteredList(b *testing.B) {
	q, err := Query{Status: []string{"todo"}}.Normalize()
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range benchSizes {
		src := testmatrix.Generate(n, 1)
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if got := q.Apply(Parse(src).Tasks()); len(got) < n/10 {
					b.Fatalf("%d TODO tasks of %d", len(got), n)
				}
			}
		})
	}
}

// BenchmarkUpdate is one Doc.UpdateTask under Store.Modify: lock, read, parse, edit, verify,
// write a temp file, fsync it, rename, fsync the folder. The folder is a
// t.TempDir on the same disk as the repo unless AGENTINFRA_BENCH_DIR says.
func BenchmarkUpdate(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			if d := os.Getenv("AGENTINFRA_BENCH_DIR"); d != "" {
				dir = d
			}
			path := filepath.Join(dir, "DEVELOPMENT_MATRIX.md")
			if err := os.WriteFile(path, testmatrix.Generate(n, 1), 0o644); err != nil {
				b.Fatal(err)
			}
			s := NewStore(path)
			ctx := context.Background()
			id := testmatrix.ID(n / 2)
			statuses := []string{"DONE", "TODO"}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, _, err := updateVia(s, ctx, id, Update{Status: Str(statuses[i%2])}, goldenNow); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// TestParseMemory10k checks the memory bound: a 10,000-row matrix
// parses in under 64 MiB. Bytes allocated by one Parse (deterministic, and
// an upper bound of its peak) are asserted; the live heap is logged.
func TestParseMemory10k(t *testing.T) {
	src := testmatrix.Generate(10000, 1)
	Parse(src) // warm up package-level state
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	d := Parse(src)
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	runtime.GC()
	var live runtime.MemStats
	runtime.ReadMemStats(&live)
	tasks := len(d.Tasks())
	runtime.KeepAlive(d)
	t.Logf("10,000 rows, %d bytes: Parse allocated %.1f MiB; live heap with the Doc held %.1f MiB (%.1f MiB before)",
		len(src), mib(allocated), mib(live.HeapAlloc), mib(before.HeapAlloc))
	if tasks != 10000 {
		t.Fatalf("%d tasks", tasks)
	}
	if allocated >= 64<<20 {
		t.Errorf("parsing 10,000 rows allocated %.1f MiB, want < 64 MiB", mib(allocated))
	}
}

func mib(n uint64) float64 { return float64(n) / (1 << 20) }
