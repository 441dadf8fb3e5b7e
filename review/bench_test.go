package review

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// review approve of a 100-file change (squash): recording is not timed,
// the landing is (merge-tree, commit-tree, the compare-and-set of main,
// the main checkout's files, the task's move to DONE, the agent's branch).
func BenchmarkApprove100Files(b *testing.B) {
	f := newFixture(b)
	ctx := context.Background()
	wt := f.agent("papi")
	body := strings.Repeat("// a line of the agent's work\n", 20)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		id := f.taskInReview(fmt.Sprintf("Change %d", i), "papi")
		for j := 0; j < 100; j++ {
			f.write(wt, fmt.Sprintf("pkg%d/file%03d.go", i, j), fmt.Sprintf("package pkg%d\n%s", i, body))
		}
		f.record(id, "papi", wt)
		b.StartTimer()
		if _, err := f.svc.Approve(ctx, id, ApproveOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// review list with 50 changes waiting, each of a few files.
func BenchmarkList50(b *testing.B) {
	f := newFixture(b)
	ctx := context.Background()
	wt := f.agent("papi")
	for i := 0; i < 50; i++ {
		id := f.taskInReview(fmt.Sprintf("Change %d", i), "papi")
		for j := 0; j < 3; j++ {
			f.write(wt, fmt.Sprintf("c%02d/f%d.go", i, j), "package c\n\nfunc F() {}\n")
		}
		f.record(id, "papi", wt)
		// The next task starts from main: each change is its own.
		if _, err := f.svc.PrepareBranch(ctx, BranchInput{Worktree: wt, Branch: "agent/papi", BaseBranch: "main"}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		items, err := f.svc.List(ctx)
		if err != nil || len(items) != 50 || items[49].Files != 3 {
			b.Fatalf("list: %d items, %v", len(items), err)
		}
	}
}
