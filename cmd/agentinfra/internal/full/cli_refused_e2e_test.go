//go:build linux

package full

// Issue 27, item 9: the audit log recorded as auto_approved calls the CLI
// then refused — a command with control characters, a blocked `sleep`, an
// Edit through a symlink. These replay the three vectors through the real
// binary (`dispatch --approval-mode ask`) and the real CLIs against a
// scripted fake model, a policy that allows each call by its text, and a
// person who approves whatever is asked; what is checked is what a person
// reads afterwards (`session show --json`: the requests and the audit log):
// for each call what agentinfra decided and then what the CLI did with it,
// never "allowed" and "ran" for a call that did not run, and the file
// outside the worktree unchanged.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/agentinfra/agentinfra/contain"
	"github.com/agentinfra/agentinfra/internal/testing/e2etools"
	"github.com/agentinfra/agentinfra/internal/testing/fakemodel"
	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/workspace"
)

// vectorsSetup is a workspace for the vectors: `docs` a symbolic link to
// a folder outside the worktree and the temporary folders, holding
// target.txt; a policy and allowlist (in cfg, for AGENTINFRA_CONFIG_DIR)
// allowing commands, every read and writes under docs/.
func vectorsSetup(t *testing.T, commands string) (dir, outside, cfg string) {
	dir, _ = dispatchCLISetup(t)
	outside = e2etools.OutsideTemp(t)
	fakemodel.WriteFile(t, filepath.Join(outside, "target.txt"), "original\n")
	if err := os.Symlink(outside, filepath.Join(dir, "docs")); err != nil {
		t.Fatal(err)
	}
	cfg = t.TempDir()
	allow := "commands: [" + commands + "]\nread: [\"**\"]\nwrite: [\"docs/**\"]\nmax_risk: high\n"
	fakemodel.WriteFile(t, filepath.Join(cfg, "allowlist.yaml"), allow)
	fakemodel.WriteFile(t, filepath.Join(dir, ".agent", "policy.yaml"), "auto_approve:\n  "+strings.ReplaceAll(strings.TrimSuffix(allow, "\n"), "\n", "\n  ")+"\n")
	return dir, outside, cfg
}

// dispatchApproving runs the supervised dispatch in dir with the CLI
// name, a person approving whatever it asks, to its end.
func dispatchApproving(t *testing.T, dir, name string, cli fakemodel.CLI) {
	t.Helper()
	dispatchDeciding(t, dir, name, cli, "Please try the vectors.", func(store.PendingView) bool { return true })
}

// dispatchDeciding runs the supervised dispatch in dir with the CLI name
// and prompt, a person deciding each request as approve says, to its end
// (within fakemodel.Timeout).
func dispatchDeciding(t *testing.T, dir, name string, cli fakemodel.CLI, prompt string, approve func(store.PendingView) bool) {
	t.Helper()
	cmd, out, _ := startDispatchIn(t, dir, nil, name, cli, prompt)
	ws, _ := workspace.New(dir)
	ctx, cancel := context.WithTimeout(context.Background(), fakemodel.Timeout)
	defer cancel()
	go decideAll(ctx, t, ws, approve)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("dispatch: %v\n%s", err, out)
		}
	case <-ctx.Done():
		t.Fatalf("the run did not end; the dispatch said:\n%s", out)
	}
}

// stepsByResults is a fake model's script: the k-th tool call once the
// conversation holds k tool results (marker counts them in the request),
// then "done".
func stepsByResults(trigger, marker string, calls []fakemodel.Answer) fakemodel.Script {
	return func(a fakemodel.Ask) fakemodel.Answer {
		if !a.ToolCall && !strings.Contains(a.User, trigger) && !strings.Contains(string(a.Body), marker) {
			return fakemodel.Answer{Text: "done"}
		}
		if k := strings.Count(string(a.Body), marker); k < len(calls) {
			return calls[k]
		}
		return fakemodel.Answer{Text: "done"}
	}
}

// shownSession is `session show --json` of a session: its requests and
// audit log.
type shownSession struct {
	Requests []struct {
		ID       int64  `json:"id"`
		Status   string `json:"status"`
		Risk     string `json:"risk"`
		NativeID string `json:"native_id"`
		Command  string `json:"command"`
		File     string `json:"file"`
	} `json:"requests"`
	Audit []struct {
		Action    string          `json:"action"`
		RequestID int64           `json:"request_id"`
		Detail    json.RawMessage `json:"detail"`
	} `json:"audit"`
}

// showSession runs `agentinfra session show ID --json` in dir.
func showSession(t *testing.T, dir string, id int64) shownSession {
	t.Helper()
	cmd := exec.Command(taskBinary(t), "session", "show", fmt.Sprint(id), "--json")
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "AGENTINFRA_ROOT="+dir, "AGENTINFRA_USER=ana", "NO_COLOR=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("session show: %v\n%s", err, errb.String())
	}
	var s shownSession
	if err := json.Unmarshal(out.Bytes(), &s); err != nil {
		t.Fatalf("session show --json: %v\n%s", err, out.String())
	}
	return s
}

// outcomes is, for each tool call (its native ID), the request a person
// decided and the actions of the audit log about the call, in order (an
// action that names a request names the call's).
func (s shownSession) outcomes(t *testing.T) map[string][]string {
	out := map[string][]string{}
	asked := map[int64]string{}
	for _, r := range s.Requests {
		asked[r.ID] = r.NativeID
	}
	for _, e := range s.Audit {
		var d struct {
			NativeID string `json:"native_id"`
		}
		if json.Unmarshal(e.Detail, &d) == nil && d.NativeID != "" {
			out[d.NativeID] = append(out[d.NativeID], e.Action)
			if e.RequestID != 0 && asked[e.RequestID] != d.NativeID {
				t.Errorf("%s of call %s names request %d, of call %s", e.Action, d.NativeID, e.RequestID, asked[e.RequestID])
			}
		}
	}
	for _, r := range s.Requests {
		out[r.NativeID] = append([]string{"request " + r.Risk + " " + r.Status}, out[r.NativeID]...)
	}
	return out
}

// The real claude, with a policy that allows by their text `printf *`,
// `sleep *`, `docs/**` writes and every read, and `docs` a symlink to a
// folder outside the worktree (and outside the temporary folders). claude
// itself refuses the command with control characters and `sleep 30`
// before any permission check: the log says tool_refused, unasked, and
// nothing allowed. The Read, Edit and Write through the symlink are judged
// by the resolved path — outside the worktree, critical, asked although
// the globs match; the person approves, and the sandbox denies the writes:
// the log says tool_ran for the read and tool_failed for both writes, and
// the file outside is unchanged. Before (issue 27, item 9) each was
// recorded auto_approved, whatever claude did next.
func TestAuditSaysWhatTheRealCLIDidWithTheIssueVectors(t *testing.T) {
	if s := contain.Supported(); s.ABI == 0 {
		t.Skipf("no Landlock here: an approved write outside the worktree is not contained (%s)", s.Why)
	}
	dir, outside, cfg := vectorsSetup(t, `"printf *", "sleep *"`)
	target := filepath.Join(outside, "target.txt")

	linked := filepath.Join(dir, "docs", "target.txt")
	calls := []fakemodel.Answer{
		{Shell: "printf 'ok\x1b]0;pwned\x07\\n' > ctl.txt"},
		{Shell: "sleep 30"},
		{Call: &fakemodel.ToolCall{Name: "Read", Input: map[string]any{"file_path": linked}}},
		{Call: &fakemodel.ToolCall{Name: "Edit", Input: map[string]any{"file_path": linked, "old_string": "original", "new_string": "changed"}}},
		{Write: &fakemodel.FileWrite{Path: filepath.Join(dir, "docs", "new.txt"), Content: "new\n"}},
	}
	fake := fakemodel.NewClaudeScript(t, stepsByResults("vectors", `"type":"tool_result"`, calls))
	cli := fakemodel.Claude(t, fake.URL)
	cli.Env = append(cli.Env, "AGENTINFRA_CONFIG_DIR="+cfg)
	dispatchApproving(t, dir, "claude", cli)

	s := showSession(t, dir, 1)
	for _, e := range s.Audit {
		t.Logf("audit: %s request %d %s", e.Action, e.RequestID, e.Detail)
	}
	got := s.outcomes(t)
	ids := map[string]string{} // the native ID of each call, by what it is about
	for _, e := range s.Audit {
		var d struct {
			NativeID            string `json:"native_id"`
			Command, File, Tool string
		}
		json.Unmarshal(e.Detail, &d)
		if what := d.Command; d.NativeID != "" {
			if what == "" {
				what = filepath.Base(d.File)
			}
			ids[d.Tool+" "+what] = d.NativeID
		}
	}
	for _, c := range []struct{ call, want string }{
		{"Bash " + calls[0].Shell, "tool_refused"}, // claude: control characters, refused before any permission check
		{"Bash sleep 30", "tool_refused"},          // claude blocks a long sleep before any permission check
		{"Read target.txt", "request critical approved, tool_ran"},
		{"Edit target.txt", "request critical approved, tool_failed"}, // the sandbox denies it
		{"Write new.txt", "request critical approved, tool_failed"},
	} {
		id := ids[c.call]
		if have := strings.Join(got[id], ", "); id == "" || !strings.HasSuffix(have, c.want) || (!strings.HasPrefix(c.want, "request") && have != c.want) {
			t.Errorf("%q (call %q): the log says %q, want %q", c.call, id, have, c.want)
		}
	}
	for _, e := range s.Audit {
		var d struct{ Tool string }
		json.Unmarshal(e.Detail, &d)
		if e.Action == "policy_allowed" || e.Action == "tool_ran" && d.Tool != "Read" {
			t.Errorf("a call of the vectors is said allowed by the policy or run: %s %s", e.Action, e.Detail)
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "original\n" {
		t.Errorf("the file outside the worktree was changed: %q", b)
	}
	for _, f := range []string{filepath.Join(outside, "new.txt"), filepath.Join(dir, "ctl.txt")} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s was written", f)
		}
	}
	reqs := fake.Requests("/v1/messages")
	if last := string(reqs[len(reqs)-1].Body); strings.Count(last, "EACCES") < 2 { // what claude told the model of the two writes
		t.Errorf("the model was not told that the sandbox denied the 2 writes:\n%.3000s", last[max(0, len(last)-3000):])
	}
}

// A tool call names what the model wants, before claude checks anything:
// a Write to a FIFO (or a device) reached the bridge's diff, which read
// the path whole — a FIFO with no writer blocked the reader of claude's
// output for good (no later request was ever raised, the run hung), and
// /dev/zero would have grown the supervisor until it died. The run goes
// on: the next command is asked and runs, the run ends, and the log says
// what claude did with the Write.
func TestAWriteToAFIFODoesNotStopTheSupervisor(t *testing.T) {
	dir, _ := dispatchCLISetup(t)
	pipe := filepath.Join(dir, "pipe")
	if err := unix.Mkfifo(pipe, 0o600); err != nil {
		t.Fatal(err)
	}
	calls := []fakemodel.Answer{
		{Write: &fakemodel.FileWrite{Path: pipe, Content: "x\n"}},
		{Shell: "touch ok.txt"},
	}
	fake := fakemodel.NewClaudeScript(t, stepsByResults("pipe", `"type":"tool_result"`, calls))
	// Nobody reads the FIFO: a Write of it approved would wait for good.
	dispatchDeciding(t, dir, "claude", fakemodel.Claude(t, fake.URL), "Please write the pipe.", func(p store.PendingView) bool { return p.File != pipe })
	if _, err := os.Stat(filepath.Join(dir, "ok.txt")); err != nil {
		t.Errorf("the command after the Write did not run (%v)", err)
	}
	s := showSession(t, dir, 1)
	var write []string
	for _, e := range s.Audit {
		t.Logf("audit: %s request %d %s", e.Action, e.RequestID, e.Detail)
		var d struct{ Tool, File string }
		if json.Unmarshal(e.Detail, &d) == nil && d.Tool == "Write" && d.File == pipe {
			write = append(write, e.Action)
		}
	}
	if len(write) == 0 || slices.Contains(write, "tool_ran") || slices.Contains(write, "policy_allowed") {
		t.Errorf("the log of the Write to the FIFO: %v, want what claude did with it, not run", write)
	}
}

// decideAll decides each pending request as it comes, approving those
// approve says.
func decideAll(ctx context.Context, t *testing.T, ws *workspace.Workspace, approve func(store.PendingView) bool) {
	person, err := store.OpenWorkspace(ctx, ws, store.Options{})
	if err != nil {
		t.Error(err)
		return
	}
	defer person.Close()
	changes, _ := person.Changes(ctx)
	for {
		pending, _ := person.Pending(ctx)
		for _, p := range pending {
			person.Decide(ctx, store.Decision{RequestID: p.ID, Approve: approve(p), By: "ana", Surface: store.SurfaceTerminal})
		}
		select {
		case <-ctx.Done():
			return
		case <-changes:
		}
	}
}

// The same vectors with the real gemini (which has no blocked sleep): it
// runs the command with control characters, which the policy allows — the
// log says policy_allowed then tool_ran, and the file is there. It
// refuses by itself the read_file, replace and write_file through the
// symlink ("Path not in workspace", before any permission request, and
// without reporting the calls to the client): no request, and nothing in
// the log says any of them was allowed or ran; the file outside is
// unchanged.
func TestAuditSaysWhatTheRealGeminiDidWithTheIssueVectors(t *testing.T) {
	dir, outside, cfg := vectorsSetup(t, `"printf *"`)
	target := filepath.Join(outside, "target.txt")
	linked := filepath.Join(dir, "docs", "target.txt")
	shell := "printf 'ok\x1b]0;pwned\x07\\n' > ctl.txt"
	calls := []fakemodel.Answer{
		{Shell: shell},
		{Call: &fakemodel.ToolCall{Name: "read_file", Input: map[string]any{"file_path": linked}}},
		{Call: &fakemodel.ToolCall{Name: "replace", Input: map[string]any{"file_path": linked, "old_string": "original", "new_string": "changed", "instruction": "change it"}}},
		{Write: &fakemodel.FileWrite{Path: filepath.Join(dir, "docs", "new.txt"), Content: "new\n"}},
	}
	fake := fakemodel.NewGeminiScript(t, stepsByResults("vectors", `"functionResponse"`, calls))
	cli := fakemodel.Gemini(t, fake.URL)
	cli.Env = append(cli.Env, "AGENTINFRA_CONFIG_DIR="+cfg)
	dispatchApproving(t, dir, "gemini", cli)
	s := showSession(t, dir, 1)
	var shellLog []string
	for _, e := range s.Audit {
		t.Logf("audit: %s request %d %s", e.Action, e.RequestID, e.Detail)
		var d struct{ Command, File string }
		json.Unmarshal(e.Detail, &d)
		switch {
		case d.Command == shell:
			shellLog = append(shellLog, e.Action)
		case strings.Contains(d.File, outside) || strings.Contains(d.File, filepath.Join(dir, "docs")):
			t.Errorf("a call through the symlink, which gemini refused, is in the log: %s %s", e.Action, e.Detail)
		}
	}
	if strings.Join(shellLog, ", ") != "policy_allowed, tool_ran" {
		t.Errorf("the command with control characters: the log says %v, want policy_allowed, tool_ran", shellLog)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "ctl.txt")); err != nil || string(b) != "ok\x1b]0;pwned\x07\n" {
		t.Errorf("the command said to have run left %q (%v)", b, err)
	}
	if len(s.Requests) != 0 {
		t.Errorf("requests were raised for calls gemini refused: %+v", s.Requests)
	}
	reqs := fake.Requests(":streamGenerateContent")
	if n := strings.Count(string(reqs[len(reqs)-1].Body), "Path not in workspace"); n != 3 { // the last request holds the whole conversation
		t.Errorf("gemini told the model %d times that a path is outside its workspace, want 3", n)
	}
	if b, _ := os.ReadFile(target); string(b) != "original\n" {
		t.Errorf("the file outside the worktree was changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(outside, "new.txt")); err == nil {
		t.Error("new.txt was written outside the worktree")
	}
}
