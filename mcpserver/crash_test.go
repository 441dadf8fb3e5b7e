//go:build unix

package mcpserver

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/internal/testing/e2etools"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/task"
)

// Issue 18, item 4: a killed MCP create left a task folder with no row
// (13 of 250). The real server is killed with SIGKILL at random moments of
// a create call; one next command (the CLI updating another task) must
// leave no folder without a row, no temporary file and no journal.
// 250 kills, with AGENTINFRA_STRESS=1 only.
func TestCrashDuringMCPCreateLeavesNoOrphanFolder(t *testing.T) {
	e2etools.StressOnly(t, "package task kills each boundary of a create exactly (TestKilledCreateIsRolledBackByTheNextWrite)")
	if testing.Short() {
		t.Skip("kills processes")
	}
	const kills = 250
	ws := newWorkspace(t, 1)
	bystander := loadTasks(t, ws)[0].ID
	bin := agentinfraBin(t)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))

	// serve starts a server, initializes it and returns a function that
	// sends a create and, when wait is set, waits for its answer.
	serve := func() (*exec.Cmd, func(i int, wait bool)) {
		cmd := exec.Command(bin, "serve", "--root", ws.Root)
		cmd.Env = serveEnv()
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		r := bufio.NewReader(stdout)
		send := func(s string) { _, _ = io.WriteString(stdin, s+"\n") }
		send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"crash","version":"0"}}}`)
		if _, err := r.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
		send(`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`)
		return cmd, func(i int, wait bool) {
			send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"task","arguments":{"action":"create","description":"mcp crash %d","mode":"coder"}}}`, i))
			if wait {
				if l, err := r.ReadString('\n'); err != nil || strings.Contains(l, `"isError":true`) {
					t.Fatalf("create: %q %v", l, err)
				}
			}
		}
	}
	var runs []time.Duration
	for i := range 3 {
		cmd, create := serve()
		start := time.Now()
		create(-1-i, true)
		runs = append(runs, time.Since(start))
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	slices.Sort(runs)
	typical := runs[1]

	leftover := regexp.MustCompile(`^(\.DEVELOPMENT_MATRIX\.md(\.tmp-)?[0-9]+|\.README\.md[0-9]+|\.creating-.*|` + regexp.QuoteMeta(task.JournalRel) + `)$`)
	mid, recovered := 0, 0
	for i := range kills {
		cmd, create := serve()
		create(i, false)
		time.Sleep(time.Duration(rng.Int64N(int64(typical) * 13 / 10)))
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		if _, err := os.Stat(filepath.Join(ws.AgentDir(), task.JournalRel)); err == nil {
			mid++
		}
		next := exec.Command(bin, "--root", ws.Root, "task", "update", bystander, "--priority", fmt.Sprintf("P%d", 1+i%4))
		next.Env = serveEnv()
		out, err := next.CombinedOutput()
		if err != nil {
			t.Fatalf("next command: %v\n%s", err, out)
		}
		if strings.Contains(string(out), "interrupted") {
			recovered++
		}
		d, err := matrix.NewStore(ws.MatrixPath()).Load(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		entries, _ := os.ReadDir(ws.TasksDir())
		for _, e := range entries {
			if leftover.MatchString(e.Name()) {
				t.Fatalf("kill %d: %s left in tasks/", i, e.Name())
			}
			if _, known := matrix.TaskFolderID(e.Name(), func(id string) bool { _, ok := d.Task(id); return ok }); !known {
				t.Fatalf("kill %d: folder %s has no row", i, e.Name())
			}
		}
		agent, _ := os.ReadDir(ws.AgentDir())
		for _, e := range agent {
			if leftover.MatchString(e.Name()) {
				t.Fatalf("kill %d: %s left in .agent/", i, e.Name())
			}
		}
	}
	t.Logf("%d kills of the server during a create (typical call %v): %d left a journal, %d were rolled back (and said so) by the next command; no orphan folder, no leftover", kills, typical, mid, recovered)
}
