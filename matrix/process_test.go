//go:build unix

package matrix

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gofrs/flock"
)

// The process tests re-run this test binary as the writer processes: with
// MATRIX_HELPER set, TestHelperProcess does that job and exits.
const helperEnv = "MATRIX_HELPER"

// helperNow is the clock of every helper process, so that versions are
// reproducible byte for byte.
var helperNow = time.Date(2026, 8, 1, 9, 0, 0, 0, time.UTC)

func helperCmd(ctx context.Context, mode, path string, extra ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, "MATRIX_PATH="+path)
	cmd.Env = append(cmd.Env, extra...)
	return cmd
}

func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		t.Skip("helper process for the multi-process tests")
	}
	ctx := context.Background()
	s := NewStore(os.Getenv("MATRIX_PATH"))
	s.LockTimeout = 60 * time.Second
	var err error
	switch mode {
	case "concurrent":
		err = concurrentWriter(ctx, s, os.Getenv("MATRIX_N"))
	case "crash":
		fmt.Println("ready")
		for err == nil {
			_, err = s.Modify(ctx, func(d *Doc) error { return crashStep(d) })
		}
	case "editor-inplace", "editor-rename":
		err = editorProcess(mode, s.Path)
	case "hold-lock":
		fl := flock.New(s.LockPath())
		if err = fl.Lock(); err == nil {
			fmt.Println("locked")
			_, _ = io.Copy(io.Discard, os.Stdin) // hold until the parent closes stdin
			err = fl.Unlock()
		}
	default:
		err = fmt.Errorf("unknown helper mode %q", mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// concurrentWriter waits for the parent to close stdin (so that all writers
// start together), then adds a task, updates it, and mentions itself on the
// shared task: three locked read-modify-writes.
func concurrentWriter(ctx context.Context, s *Store, n string) error {
	_, _ = io.Copy(io.Discard, os.Stdin)
	tk, err := createVia(s, ctx, Task{Description: "created by writer " + n, Mode: "coder"}, helperNow)
	if err != nil {
		return err
	}
	fmt.Println(tk.ID)
	if _, _, err := updateVia(s, ctx, tk.ID, Update{Status: Str("DONE"), AddAgents: []string{"w" + n}}, helperNow); err != nil {
		return err
	}
	_, _, err = updateVia(s, ctx, "5a5a5a", Update{AddAgents: []string{"w" + n}}, helperNow)
	return err
}

const concurrentSeed = "# Shared matrix\n\n" + CanonicalHeader +
	"| 5a5a5a | IN_PROGRESS | P1 | hard | coder | | | Everyone mentions themselves here | 2026-01-01 | 2026-01-01 |\n" +
	"\n## Notes\n\nKept.\n"

func TestConcurrentWriterProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 50 processes")
	}
	const writers = 50
	s := writeMatrix(t, concurrentSeed)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	type proc struct {
		cmd   *exec.Cmd
		stdin io.WriteCloser
		out   bytes.Buffer
		errb  bytes.Buffer
	}
	procs := make([]*proc, writers)
	for i := range procs {
		p := &proc{cmd: helperCmd(ctx, "concurrent", s.Path, "MATRIX_N="+strconv.Itoa(i))}
		p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.errb
		var err error
		if p.stdin, err = p.cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs[i] = p
	}
	start := time.Now()
	for _, p := range procs {
		p.stdin.Close() // go
	}
	ids := map[string]int{}
	for i, p := range procs {
		if err := p.cmd.Wait(); err != nil {
			t.Fatalf("writer %d: %v\n%s", i, err, p.errb.String())
		}
		id := strings.TrimSpace(p.out.String())
		if prev, dup := ids[id]; dup {
			t.Errorf("writers %d and %d both created %s", prev, i, id)
		}
		ids[id] = i
	}
	t.Logf("%d writers × 3 locked writes in %v", writers, time.Since(start).Round(time.Millisecond))

	d, err := s.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diags := d.Diagnostics(); len(diags) != 0 {
		t.Fatalf("the matrix does not validate: %v", diags)
	}
	if got := len(d.Tasks()); got != writers+1 {
		t.Errorf("%d tasks, want %d", got, writers+1)
	}
	seen := map[string]bool{}
	for _, id := range d.IDs() {
		if seen[id] {
			t.Errorf("ID %s appears twice", id)
		}
		seen[id] = true
	}
	for id, i := range ids {
		tk, ok := d.Task(id)
		want := "created by writer " + strconv.Itoa(i)
		if !ok || tk.Status != "DONE" || tk.Description != want || strings.Join(tk.Agents, " ") != "@w"+strconv.Itoa(i) {
			t.Errorf("writer %d's task %s: %+v (lost write?)", i, id, tk)
		}
	}
	shared, _ := d.Task("5a5a5a")
	if len(shared.Agents) != writers {
		t.Errorf("the shared task has %d agents, want %d (lost updates): %v", len(shared.Agents), writers, shared.Agents)
	}
	if !strings.HasSuffix(string(d.Bytes()), "\n## Notes\n\nKept.\n") || !strings.HasPrefix(string(d.Bytes()), "# Shared matrix\n\n"+CanonicalHeader+"| 5a5a5a |") {
		t.Errorf("prose around the table changed:\n%s", d.Bytes())
	}
}

// crashStep is one write of a crash-test writer: generation g becomes g+1 in
// the description of task 6e6e6e, and every fifth generation adds a task. The
// versions are therefore a pure function of the generation.
func crashStep(d *Doc) error {
	tk, ok := d.Task("6e6e6e")
	if !ok {
		return errors.New("task 6e6e6e is gone")
	}
	g, err := strconv.Atoi(strings.TrimPrefix(tk.Description, "generation "))
	if err != nil {
		return fmt.Errorf("description %q: %w", tk.Description, err)
	}
	g++
	if _, err := d.UpdateTask("6e6e6e", Update{Description: Str("generation " + strconv.Itoa(g)), Status: Str(Statuses[g%len(Statuses)])}, helperNow); err != nil {
		return err
	}
	if g%5 == 0 {
		_, err = d.CreateTask(Task{ID: fmt.Sprintf("%06x", 0xc00000+g), Description: fmt.Sprintf("added at generation %d", g)}, helperNow)
	}
	return err
}

const crashSeed = "# Crash matrix\r\n\r\nCRLF, prose, a legend: all must survive.\r\n\r\n" +
	"| ID | Status | Pri | Diff | Mode | Skills | Agents | Description | Created | Updated |\r\n" +
	"|----|--------|-----|------|------|--------|--------|-------------|---------|---------|\r\n" +
	"| 6e6e6e | TODO | P1 | med | coder | | | generation 0 | 2026-01-01 | 2026-01-01 |\r\n" +
	"| 7f7f7f | DONE | P2 | easy | | | | bystander | 2026-01-01 | 2026-01-01 |\r\n" +
	"\r\n| Status | Meaning |\r\n|---|---|\r\n| TODO | open |\r\n"

// versions computes, and caches, the bytes of every generation.
type versions struct {
	mu sync.Mutex
	v  [][]byte
}

func (vs *versions) get(t testing.TB, g int) []byte {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	for len(vs.v) <= g {
		d := Parse(vs.v[len(vs.v)-1])
		if err := crashStep(d); err != nil {
			t.Errorf("computing generation %d: %v", len(vs.v), err)
			return nil
		}
		vs.v = append(vs.v, d.Bytes())
	}
	return vs.v[g]
}

var generationRe = regexp.MustCompile(`\| 6e6e6e \|[^\n]*\| generation (\d+) \|`)

// checkVersion returns the generation of src after checking that src is
// byte for byte the version of that generation.
func checkVersion(t testing.TB, vs *versions, src []byte) (int, error) {
	m := generationRe.FindSubmatch(src)
	if m == nil {
		return -1, fmt.Errorf("no generation in the file (torn or lost?):\n%s", src)
	}
	g, _ := strconv.Atoi(string(m[1]))
	if want := vs.get(t, g); !bytes.Equal(src, want) {
		return g, fmt.Errorf("the file is not generation %d byte for byte:\n%q\nwant\n%q", g, src, want)
	}
	return g, nil
}

// TestCrashedWritersLeaveOldOrNewVersion kills writer processes with SIGKILL
// at random moments; after each kill the matrix must be exactly one of the
// versions a writer produces, never older than before, and validate, and
// the previous version (.prev) a whole version no newer than it. A reader
// reads without a lock throughout and must never see anything else.
func TestCrashedWritersLeaveOldOrNewVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("kills 20+ processes")
	}
	minKills, budget := 20, 90*time.Second // a smoke run; the stress run is the test
	if os.Getenv("AGENTINFRA_STRESS") == "1" {
		minKills, budget = 1000, 6*time.Minute
	}
	if raceEnabled {
		minKills /= 4 // race-instrumented writers take far longer to start
	}
	s := writeMatrix(t, crashSeed)
	vs := &versions{v: [][]byte{[]byte(crashSeed)}}

	stop := make(chan struct{})
	var reads atomic.Int64
	var readErr atomic.Pointer[error]
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the lock-free reader
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			src, err := os.ReadFile(s.Path)
			if err == nil {
				_, err = checkVersion(t, vs, src)
			}
			if err != nil {
				err = fmt.Errorf("reader: %w", err)
				readErr.Store(&err)
				return
			}
			reads.Add(1)
		}
	}()

	ctx := context.Background()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	deadline := time.Now().Add(budget)
	gen, kills, advanced, midWrite := 0, 0, 0, 0
	// Bounded in count and in time: a loaded machine starts writers slowly,
	// so the budget ends the run early; it fails only when too few kills
	// happened to mean anything.
	for kills < minKills && time.Now().Before(deadline) {
		cmd := helperCmd(ctx, "crash", s.Path)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Wait until the writer runs (start-up time varies with the load),
		// then kill it anywhere in its first dozens of writes.
		if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "ready\n" {
			t.Fatalf("writer: %q %v\n%s", line, err, errb.String())
		}
		time.Sleep(time.Duration(rng.IntN(30_000)) * time.Microsecond)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		err = cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("writer did not die by SIGKILL: %v\n%s", err, errb.String())
		}
		kills++
		if entries, _ := os.ReadDir(filepath.Dir(s.Path)); len(entries) > 3 {
			midWrite++ // the writer died between creating its temp file and the rename
		}
		src, err := os.ReadFile(s.Path)
		if err != nil {
			t.Fatal(err)
		}
		g, err := checkVersion(t, vs, src)
		if err != nil {
			t.Fatalf("after kill %d: %v", kills, err)
		}
		if g < gen {
			t.Fatalf("after kill %d: generation went back from %d to %d", kills, gen, g)
		}
		// The previous version is a whole version too, never a newer one.
		if prev, err := os.ReadFile(s.PrevPath()); err == nil {
			pg, err := checkVersion(t, vs, prev)
			if err != nil || pg > g {
				t.Fatalf("after kill %d: the previous version (generation %d, matrix %d): %v", kills, pg, g, err)
			}
		}
		if g > gen {
			advanced++
		}
		gen = g
		if diags := Parse(src).Diagnostics(); len(diags) != 0 {
			t.Fatalf("after kill %d the matrix does not validate: %v", kills, diags)
		}
		if readErr.Load() != nil {
			break
		}
	}
	close(stop)
	wg.Wait()
	if err := readErr.Load(); err != nil {
		t.Fatal(*err)
	}
	if kills < minKills/10 {
		t.Fatalf("only %d kills within %v (want %d): too few to test anything", kills, budget, minKills)
	}
	// The lock must not outlive its holder: a normal update goes through.
	s.LockTimeout = 2 * time.Second
	if _, _, err := updateVia(s, ctx, "7f7f7f", Update{Status: Str("TODO")}, helperNow); err != nil {
		t.Fatalf("update after the kills: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Dir(s.Path))
	if len(entries) != 3 {
		for _, e := range entries {
			t.Log(e.Name())
		}
		t.Errorf("%d files next to the matrix after a clean write, want the matrix, its lock and its previous version: the temp files of killed writers must be cleaned up", len(entries))
	}
	t.Logf("%d kills, %d of them after at least one new write, %d in the middle of a write (temp file left); final generation %d; %d lock-free reads all saw a whole version; %d files in the folder after a clean write",
		kills, advanced, midWrite, gen, reads.Load(), len(entries))
	if advanced < kills/10 {
		t.Errorf("only %d of %d kills came after a write: the kills are not exercising the writer", advanced, kills)
	}
}

func TestLockTimeoutNamesTheLockFile(t *testing.T) {
	const src = "| ID | Status | Description |\n|---|---|---|\n| 0000e1 | TODO | x |\n"
	s := writeMatrix(t, src)
	ctx := context.Background()
	holder := helperCmd(ctx, "hold-lock", s.Path)
	stdin, err := holder.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Process.Kill(); _ = holder.Wait() }()
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "locked\n" {
		t.Fatalf("holder: %q %v", line, err)
	}

	s.LockTimeout = 200 * time.Millisecond
	start := time.Now()
	_, _, err = updateVia(s, ctx, "0000e1", Update{Status: Str("DONE")}, goldenNow)
	waited := time.Since(start)
	if !errors.Is(err, ErrLockTimeout) || !strings.Contains(err.Error(), s.LockPath()) {
		t.Fatalf("err = %v, want ErrLockTimeout naming %s", err, s.LockPath())
	}
	if waited < 200*time.Millisecond {
		t.Errorf("waited %v for a 200ms lock timeout", waited)
	}
	assertUntouched(t, s, src)

	// Readers take no lock.
	if d, err := s.Load(ctx); err != nil || len(d.Tasks()) != 1 {
		t.Fatalf("Load while locked: %v", err)
	}
	// A cancelled context ends the wait with the context's error.
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	s.LockTimeout = 10 * time.Second
	if _, err := createVia(s, cctx, Task{Description: "y"}, goldenNow); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want the context's deadline", err)
	}

	stdin.Close() // release
	if err := holder.Wait(); err != nil {
		t.Fatalf("holder: %v", err)
	}
	s.LockTimeout = 2 * time.Second
	if _, _, err := updateVia(s, ctx, "0000e1", Update{Status: Str("DONE")}, goldenNow); err != nil {
		t.Fatalf("update after the lock was released: %v", err)
	}
}
