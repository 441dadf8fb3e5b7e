//go:build linux

package full

// Issue 27, "agents cannot decide": agent B — a real dispatch of the stub
// agent, whose shell command is the attack — tries to approve agent A's
// requests with `agentinfra approve`, with a git alias, and with the web
// console's HTTP API and a stolen cookie. $AGENTINFRA_USER is the person's
// in every process (agents inherit it): only where the decision comes from
// tells them apart. Each try is refused with its own error, audited, and
// changes nothing; the person, outside the run, then decides both.

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/store"
	"github.com/agentinfra/agentinfra/supervision"
	"github.com/agentinfra/agentinfra/workspace"
)

// pendingOf gives the workspace's store an active session of ana's with a
// pending critical request to run command.
func pendingOf(t *testing.T, dir, agent, command string) (reqID, sesID int64) {
	t.Helper()
	ws, _ := workspace.New(dir)
	ctx := context.Background()
	st, err := store.OpenWorkspace(ctx, ws, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ses, err := st.CreateSession(ctx, store.NewSession{Owner: "ana", Workspace: dir, CLI: "claude", Agent: agent})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.SetSessionStatus(ctx, ses.ID, store.Transition{To: store.SessionActive, By: "ana"}); err != nil {
		t.Fatal(err)
	}
	r, err := st.RaiseRequest(ctx, store.NewRequest{SessionID: ses.ID, Kind: store.KindCommand, Tool: "Bash", Command: command,
		Title: "Run " + command, Risk: store.RiskCritical, Timeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return r.ID, ses.ID
}

// requestIn reads request id and the audit lines of action from dir's store.
func requestIn(t *testing.T, dir string, id int64, action string) (store.Request, []store.Event) {
	t.Helper()
	ws, _ := workspace.New(dir)
	ctx := context.Background()
	st, err := store.OpenWorkspace(ctx, ws, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r, err := st.Request(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	all, err := st.Audit(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	var evs []store.Event
	for _, e := range all {
		if e.Action == action {
			evs = append(evs, e)
		}
	}
	return r, evs
}

// startConsoleProcess runs `agentinfra console` as the person and signs a browser
// in: the console's base URL and the session cookie.
func startConsoleProcess(t *testing.T, bin, dir string, env []string) (base string, cookie *http.Cookie) {
	t.Helper()
	cmd := exec.Command(bin, "console", "--addr", "127.0.0.1:0", "--no-qr")
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() })
	sc := bufio.NewScanner(out)
	link := ""
	for link == "" && sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); strings.HasPrefix(l, "http://") {
			link = l
		}
	}
	go io.Copy(io.Discard, out)
	u, err := url.Parse(link)
	if err != nil || link == "" {
		t.Fatalf("the console printed no link (%q)", link)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, c := range resp.Cookies() {
		cookie = c
	}
	if cookie == nil {
		t.Fatalf("signing in set no cookie (%s)", resp.Status)
	}
	return "http://" + u.Host, cookie
}

func TestAnAgentCannotApproveAnotherAgentsRequest(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	bin := taskBinary(t)
	dir, tools := dispatchCLISetup(t)
	first, _ := pendingOf(t, dir, "papi", "rm -rf build")
	second, _ := pendingOf(t, dir, "lola", "rm -rf dist")
	person := append(os.Environ(), "AGENTINFRA_ROOT="+dir, "AGENTINFRA_USER=ana", "NO_COLOR=1")
	base, cookie := startConsoleProcess(t, bin, dir, person)

	// Agent B: a dispatch of task a1b2c3 whose agent runs three attacks.
	// Its environment is the person's (AGENTINFRA_USER=ana included), and
	// it holds the person's console cookie (how it got it does not matter
	// here: see TestConsoleLeavesNoCredentialOnDisk).
	outDir := t.TempDir()
	attack := strings.Join([]string{
		`agentinfra approve ` + itoa(first) + ` --reason approved-by-agent-B > "$OUT/cli" 2>&1; echo "exit $?" >> "$OUT/cli"`,
		`git -c alias.x='!agentinfra approve ` + itoa(first) + ` --reason by-alias' x > "$OUT/alias" 2>&1; echo "exit $?" >> "$OUT/alias"`,
		`curl -s -o "$OUT/console.body" -w '%{http_code}' -b '` + cookie.Name + `=` + cookie.Value + `' -H 'Origin: ` + base + `' -H 'Accept: application/json' ` +
			`-d reason=by-console ` + base + `/inbox/` + itoa(second) + `/approve > "$OUT/console"`,
	}, "; ")
	cmd := exec.Command(bin, "dispatch", "a1b2c3", "--json")
	cmd.Dir = dir
	cmd.Env = append(person, "AGENTINFRA_TOOLS="+tools, "STUB_MODE=exec", "STUB_EXEC_OUT="+filepath.Join(outDir, "exec"),
		"STUB_EXEC="+attack, "OUT="+outDir, "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("agent B's dispatch: %v\n%s", err, out)
	}
	read := func(name string) string { return readText(t, filepath.Join(outDir, name)) }
	t.Logf("agent B's approve: %s", read("cli"))

	for _, c := range []struct{ name, out string }{{"agentinfra approve", read("cli")}, {"a git alias", read("alias")}} {
		if !strings.Contains(c.out, "exit 7") || !strings.Contains(c.out, "refused: this command (pid ") ||
			!strings.Contains(c.out, "runs inside agent run a1b2c3-") || !strings.Contains(c.out, "a person must decide request "+itoa(first)+" from outside the agent's processes") {
			t.Errorf("%s from inside agent B's run: %s", c.name, c.out)
		}
	}
	var body struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	}
	json.Unmarshal([]byte(read("console.body")), &body)
	if read("console") != "403" || body.OK || !strings.Contains(body.Error, "refused: the client of this request (pid ") || !strings.Contains(body.Error, "curl") {
		t.Errorf("the console's API with the person's cookie from inside agent B's run: %s %s", read("console"), read("console.body"))
	}
	for _, id := range []int64{first, second} {
		r, refusals := requestIn(t, dir, id, supervision.ActionRefusedInsideRun)
		if r.Status != store.StatusPending {
			t.Errorf("request %d is %s by %s via %s after agent B's tries: want pending", id, r.Status, r.DecidedBy, r.Surface)
		}
		if len(refusals) != 3 {
			t.Errorf("%d refusals in the audit log, want 3 (CLI, alias, console): %+v", len(refusals), refusals)
		}
	}

	// The person, outside every run, decides both: by the CLI and by the page.
	approve := exec.Command(bin, "approve", itoa(first))
	approve.Dir, approve.Env = dir, person
	if out, err := approve.CombinedOutput(); err != nil {
		t.Fatalf("the person's approve: %v\n%s", err, out)
	}
	form := url.Values{"reason": {"looked at it"}}
	req, _ := http.NewRequest(http.MethodPost, base+"/inbox/"+itoa(second)+"/approve", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	req.Header.Set("Accept", "application/json")
	req.AddCookie(cookie)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("the person's approval on the page: %s %s", resp.Status, b)
	}
	for id, surface := range map[int64]string{first: store.SurfaceTerminal, second: store.SurfaceWeb} {
		if r, _ := requestIn(t, dir, id, ""); r.Status != store.StatusApproved || r.Surface != surface {
			t.Errorf("request %d after the person's approval: %s via %s", id, r.Status, r.Surface)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
