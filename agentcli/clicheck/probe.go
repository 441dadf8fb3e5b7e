package clicheck

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/agentinfra/agentinfra/agentcli"
	"github.com/agentinfra/agentinfra/bridge"
	"github.com/agentinfra/agentinfra/runner"
	"github.com/agentinfra/agentinfra/store"
)

// Steps of the live check, in order.
const (
	StepInitialise = "initialise"
	StepPermission = "permission request"
	StepResult     = "answer and tool result"
	StepStop       = "stop"
)

// Step is one step of the live check.
type Step struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail,omitempty"`
}

// Finding is what doctor knows of one agent CLI.
type Finding struct {
	CLI     string `json:"cli"`
	Found   bool   `json:"found"`
	Path    string `json:"path,omitempty"`
	Version string `json:"version,omitempty"`
	// Tested is the range of versions the tests pin; InRange says Version
	// is in it.
	Tested  string `json:"tested"`
	InRange bool   `json:"in_range"`
	// Steps are the live protocol check's, as far as it got.
	Steps []Step `json:"steps,omitempty"`
	// OK: found, and passed the live check.
	OK bool `json:"ok"`
	// Problem says what differs from what agentinfra's bridge expects (or
	// why the CLI could not be checked).
	Problem string `json:"problem,omitempty"`
	// TookMS is how long the live check took.
	TookMS int64 `json:"took_ms"`
}

// Timeout bounds one live check (a gemini starts in seconds; a loaded
// machine takes longer).
const Timeout = 90 * time.Second

// command is the shell command the fake model asks for; file is what it
// creates.
const (
	checkFile    = "agentinfra-doctor.txt"
	checkCommand = "touch " + checkFile
)

// Check finds cli (at bin; "" = where agentinfra looks: $AGENTINFRA_TOOLS,
// then $PATH, read with getenv), reads its version and runs the live
// protocol check. A CLI that is not found is a Finding with Found false.
func Check(ctx context.Context, cli, bin string, getenv func(string) string) (f Finding) {
	f = Finding{CLI: cli, Tested: Tested[cli].String()}
	if bin == "" {
		p, err := runner.LookupCLIEnv(cli, getenv)
		if err != nil {
			f.Problem = err.Error()
			return f
		}
		bin = p
	}
	f.Found, f.Path = true, bin
	start := time.Now()
	defer func() { f.TookMS = time.Since(start).Milliseconds() }()
	p, err := newProbe(cli, bin, getenv)
	if err != nil {
		f.Problem = err.Error()
		return f
	}
	defer p.close()
	if f.Version, err = p.version(ctx); err != nil {
		f.Problem = err.Error()
		return f
	}
	f.InRange = Tested[cli].Contains(f.Version)
	f.Steps, f.Problem = p.run(ctx)
	f.OK = f.Problem == ""
	return f
}

// probe is one live check: a private folder (the CLI's home, its working
// folder, the check's store) and the fake model.
type probe struct {
	cli, bin string
	dir      string
	work     string
	env      []string
	model    string
	fake     *fakeAPI
}

func newProbe(cli, bin string, getenv func(string) string) (*probe, error) {
	dir, err := os.MkdirTemp("", "agentinfra-doctor-*")
	if err != nil {
		return nil, err
	}
	p := &probe{cli: cli, bin: bin, dir: dir, work: filepath.Join(dir, "work")}
	if p.fake, err = serveFake(checkCommand); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := p.prepare(getenv); err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

func (p *probe) close() {
	p.fake.Close()
	os.RemoveAll(p.dir)
}

// prepare writes the CLI's home, pointed at the fake model and nothing
// else: a proxy nobody listens on for anything but 127.0.0.1, no update
// checks, telemetry or retries.
func (p *probe) prepare(getenv func(string) string) error {
	home := filepath.Join(p.dir, "home")
	for _, d := range []string{p.work, filepath.Join(home, "tmp")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	const nowhere = "http://127.0.0.1:9"
	p.env = []string{"PATH=" + getenv("PATH"), "HOME=" + home, "TMPDIR=" + filepath.Join(home, "tmp"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_CACHE_HOME=" + filepath.Join(home, ".cache"), "XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"NO_COLOR=1", "CI=1", "LANG=C.UTF-8",
		"HTTP_PROXY=" + nowhere, "HTTPS_PROXY=" + nowhere, "ALL_PROXY=" + nowhere, "http_proxy=" + nowhere, "https_proxy=" + nowhere, "all_proxy=" + nowhere,
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost"}
	write := func(path, content string) error {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return err
		}
		return os.WriteFile(path, []byte(content), 0o600)
	}
	switch p.cli {
	case runner.CLIClaude:
		p.model = "claude-sonnet-4-5"
		p.env = append(p.env, "ANTHROPIC_BASE_URL="+p.fake.url, "ANTHROPIC_API_KEY=agentinfra-doctor", "CLAUDE_CONFIG_DIR="+filepath.Join(home, ".claude"),
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1", "CLAUDE_CODE_MAX_RETRIES=0")
	case runner.CLICodex:
		p.model = "gpt-5-codex"
		codexHome := filepath.Join(home, ".codex")
		p.env = append(p.env, "CODEX_HOME="+codexHome, "DOCTOR_FAKE_KEY=agentinfra-doctor")
		if err := write(filepath.Join(codexHome, "config.toml"), fmt.Sprintf(`model_provider = "agentinfra_doctor"
check_for_update_on_startup = false
[analytics]
enabled = false
[features]
plugins = false
remote_plugin = false
apps = false
[model_providers.agentinfra_doctor]
name = "agentinfra doctor"
base_url = %q
wire_api = "responses"
env_key = "DOCTOR_FAKE_KEY"
request_max_retries = 0
stream_max_retries = 0
`, p.fake.url+"/v1")); err != nil {
			return err
		}
	case runner.CLIGemini:
		p.model = "gemini-2.5-flash"
		p.env = append(p.env, "GEMINI_CLI_HOME="+home, "GEMINI_API_KEY=agentinfra-doctor", "GOOGLE_GEMINI_BASE_URL="+p.fake.url)
		if err := write(filepath.Join(home, ".gemini", "settings.json"), `{"security": {"auth": {"selectedType": "gemini-api-key"}},
 "general": {"maxAttempts": 1, "enableAutoUpdate": false, "enableAutoUpdateNotification": false},
 "privacy": {"usageStatisticsEnabled": false}, "telemetry": {"enabled": false}}`); err != nil {
			return err
		}
	default:
		return fmt.Errorf("no protocol check for the agent CLI %q", p.cli)
	}
	return nil
}

// version is what `CLI --version` says, as a version number.
func (p *probe) version(ctx context.Context) (string, error) {
	vctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(vctx, p.bin, "--version")
	cmd.Env, cmd.Dir = p.env, p.work
	out, err := cmd.CombinedOutput()
	v := ParseVersion(string(out))
	switch {
	case err != nil && v == "":
		return "", fmt.Errorf("%s --version failed (%v): %s", p.bin, err, clean(string(out)))
	case v == "":
		return "", fmt.Errorf("%s --version printed no version number: %q", p.bin, clean(string(out)))
	}
	return v, nil
}

// run is the live check: the CLI through agentinfra's own bridge, every
// permission request going to a store of the check's own, each step
// recorded. problem is "" when every step passed.
func (p *probe) run(ctx context.Context) (steps []Step, problem string) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	fail := func(step, detail string) ([]Step, string) {
		steps = append(steps, Step{Name: step, Detail: detail})
		return steps, step + ": " + detail
	}
	st, err := store.Open(ctx, filepath.Join(p.dir, "check.db"), store.Options{})
	if err != nil {
		return fail(StepInitialise, "the check's own store: "+err.Error())
	}
	defer st.Close()
	ses, err := st.CreateSession(ctx, store.NewSession{Owner: "doctor", Workspace: p.work, CLI: p.cli, Title: "agentinfra doctor's protocol check"})
	if err == nil {
		ses, err = st.SetSessionStatus(ctx, ses.ID, store.Transition{To: store.SessionActive, By: "doctor"})
	}
	if err != nil {
		return fail(StepInitialise, "the check's own session: "+err.Error())
	}
	events := make(chan runner.Event, 256)
	var lastErr lastError
	b, err := agentcli.StartSupervised(ctx, bridge.Request{CLI: p.cli, Binary: p.bin, Model: p.model, Dir: p.work, Env: p.env, CleanEnv: true,
		Prompt: trigger + ": run the shell command the tool call gives, then say done."},
		bridge.Options{Store: st, Session: ses, KillGrace: 2 * time.Second, OnEvent: func(ev runner.Event) {
			if ev.Kind == "error" {
				lastErr.set(ev.Text)
			}
			select {
			case events <- ev:
			default:
			}
		}})
	if err != nil {
		return fail(StepInitialise, err.Error())
	}
	proc := b.(bridge.Started).Process()
	ended := func() string { // why the CLI ended: its result's error
		b.Close()
		res, err := b.Wait()
		if res.Error != "" {
			return res.Error
		}
		if err != nil {
			return err.Error()
		}
		return fmt.Sprintf("%s exited (code %d)", p.cli, res.ExitCode)
	}
	defer func() {
		b.(bridge.Started).Stop()
		b.Wait()
	}()

	// initialise: the CLI says its session.
	if detail, ok := waitFor(ctx, events, proc.Done(), func(ev runner.Event) bool { return ev.Kind == "init" }); !ok {
		if detail == "" {
			detail = ended()
		}
		return fail(StepInitialise, detail)
	}
	steps = append(steps, Step{Name: StepInitialise, OK: true})

	// permission request: one reaches the store through the bridge.
	req, detail := p.waitRequest(ctx, st, b, proc.Done())
	if req.ID == 0 {
		switch {
		case detail != "":
		case lastErr.get() != "":
			detail = "the turn ended without a permission request: " + lastErr.get()
		default:
			detail = "the CLI ended without asking permission: " + ended()
		}
		if p.fake.toolAsked() {
			if _, err := os.Stat(filepath.Join(p.work, checkFile)); err == nil {
				detail = "the CLI ran the command without asking permission (its request never reached the bridge)"
			}
		}
		return fail(StepPermission, detail)
	}
	steps = append(steps, Step{Name: StepPermission, OK: true, Detail: req.Title})

	// answer and tool result: approved, the command runs and the model
	// gets its result.
	if _, err := st.Decide(ctx, store.Decision{RequestID: req.ID, Approve: true, By: "doctor", Surface: store.SurfaceTerminal}); err != nil {
		return fail(StepResult, "approve the request: "+err.Error())
	}
	if detail, ok := waitTurn(ctx, b, proc.Done()); !ok {
		if detail == "" {
			detail = "the CLI ended before its turn did: " + ended()
		}
		return fail(StepResult, detail)
	}
	result, got := p.fake.toolResult()
	if _, err := os.Stat(filepath.Join(p.work, checkFile)); err != nil {
		return fail(StepResult, fmt.Sprintf("approved, but the command did not run (%s is not there): the CLI did not read the answer as an approval (the tool result the model got: %q)", checkFile, result))
	}
	if !got {
		return fail(StepResult, "the command ran, but its result never reached the model")
	}
	steps = append(steps, Step{Name: StepResult, OK: true, Detail: strings.TrimSpace(bridge.Clip([]byte(result)))})

	// stop: the conversation closed, the CLI exits cleanly.
	b.Close()
	select {
	case <-proc.Done():
	case <-time.After(20 * time.Second):
		return fail(StepStop, "the CLI did not exit within 20s of the end of its input")
	}
	if res, err := b.Wait(); err != nil {
		return fail(StepStop, mdOr(res.Error, err.Error()))
	}
	steps = append(steps, Step{Name: StepStop, OK: true})
	return steps, ""
}

// waitFor waits for an event that ok accepts; false when the process ended
// or ctx did first (detail says ctx's end).
func waitFor(ctx context.Context, events <-chan runner.Event, done <-chan struct{}, ok func(runner.Event) bool) (string, bool) {
	for {
		select {
		case ev := <-events:
			if ok(ev) {
				return "", true
			}
		case <-done:
			for { // what was printed before the end
				select {
				case ev := <-events:
					if ok(ev) {
						return "", true
					}
				default:
					return "", false
				}
			}
		case <-ctx.Done():
			return fmt.Sprintf("nothing after %s", Timeout), false
		}
	}
}

// waitRequest waits for the session's pending request.
func (p *probe) waitRequest(ctx context.Context, st *store.Store, b bridge.Bridge, done <-chan struct{}) (store.Request, string) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if pend, err := st.Pending(ctx); err == nil && len(pend) > 0 {
			return pend[0].Request, ""
		}
		select {
		case ev := <-b.TurnEnded():
			if pend, err := st.Pending(ctx); err == nil && len(pend) > 0 {
				return pend[0].Request, ""
			}
			return store.Request{}, fmt.Sprintf("the turn ended (%s) without a permission request", mdOr(ev.Text, ev.Kind))
		case <-done:
			if pend, err := st.Pending(ctx); err == nil && len(pend) > 0 {
				return pend[0].Request, ""
			}
			return store.Request{}, ""
		case <-ctx.Done():
			return store.Request{}, fmt.Sprintf("no permission request within %s", Timeout)
		case <-tick.C:
		}
	}
}

// waitTurn waits for the turn to end.
func waitTurn(ctx context.Context, b bridge.Bridge, done <-chan struct{}) (string, bool) {
	select {
	case <-b.TurnEnded():
		return "", true
	case <-done:
		return "", false
	case <-ctx.Done():
		return fmt.Sprintf("the turn did not end within %s", Timeout), false
	}
}

func mdOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// lastError is the last error the CLI reported.
type lastError struct {
	mu   sync.Mutex
	text string
}

func (l *lastError) set(s string) { l.mu.Lock(); l.text = s; l.mu.Unlock() }

func (l *lastError) get() string { l.mu.Lock(); defer l.mu.Unlock(); return l.text }
