package console_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agentinfra/agentinfra/fleet/local"
	"github.com/agentinfra/agentinfra/fleet/local/localtest"
	"github.com/agentinfra/agentinfra/internal/testing/e2etools"
)

// One headless Chromium serves every browser test of the package (a tab
// each): starting it is most of a browser test's cost.
var browser struct {
	once    sync.Once
	ctx     context.Context
	cancel  func()
	dataDir string
	err     error
}

func TestMain(m *testing.M) {
	if os.Getenv(superviseEnv) == "1" {
		os.Exit(localtest.Supervise(os.Args[1:], local.Options{}))
	}
	code := m.Run()
	if browser.cancel != nil {
		browser.cancel()
	}
	if browser.dataDir != "" {
		os.RemoveAll(browser.dataDir)
	}
	os.Exit(code)
}

// chromiumPath is Debian's chromium (or another Chrome on PATH).
func chromiumPath() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

func startBrowser() {
	bin := chromiumPath()
	if bin == "" {
		browser.err = fmt.Errorf("no chromium on PATH (Debian: apt-get install chromium)")
		return
	}
	dir, err := os.MkdirTemp("", "agentinfra-console-chromium-")
	if err != nil {
		browser.err = err
		return
	}
	browser.dataDir = dir
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.UserDataDir(dir),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("mute-audio", true),
		chromedp.WindowSize(1280, 900),
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		cancelCtx()
		cancelAlloc()
		browser.err = fmt.Errorf("start %s: %w", bin, err)
		return
	}
	browser.ctx = ctx
	browser.cancel = func() { cancelCtx(); cancelAlloc() }
}

// tab opens a new tab of the shared browser for t (closed with t). The
// browser tests drive a real Chromium for seconds each (minutes for the
// package on a 2-core machine), so they run with AGENTINFRA_E2E=1 (as CI
// does), and then a missing chromium is a failure.
func tab(t *testing.T) context.Context {
	t.Helper()
	if os.Getenv(e2etools.EnvE2E) != "1" {
		t.Skipf("a real browser: end-to-end, runs with %s=1 (as CI does)", e2etools.EnvE2E)
	}
	browser.once.Do(startBrowser)
	if browser.err != nil {
		t.Fatalf("the browser tests need chromium: %v", browser.err)
	}
	ctx, cancel := chromedp.NewContext(browser.ctx)
	ctx, cancelT := context.WithTimeout(ctx, 150*time.Second)
	t.Cleanup(func() { cancelT(); cancel() })
	return ctx
}

// open signs the tab in with a fresh link and goes to path, waiting for
// the live stream to be connected.
func (w *world) open(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	if err := chromedp.Do(ctx,
		chromedp.Navigate(w.srv.Link(w.base)),
		chromedp.WaitVisible(chromedp.CSS(`#conn[data-state="live"]`)),
		chromedp.Navigate(w.base+path),
		chromedp.WaitVisible(chromedp.CSS(`#conn[data-state="live"]`)),
	); err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
}

func run(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// value runs one action that reads something from the page.
func value[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

func textOf(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	// In one evaluation: a live refresh may replace the node between a
	// query and a read by node ID ("No node with given id found").
	return evalJS[string](t, ctx, fmt.Sprintf(`(document.querySelector(%q) || {innerText: ""}).innerText`, sel))
}

func evalJS[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	return value(t, ctx, expr, chromedp.Evaluate[T](expr))
}

func visible(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.WaitVisible(chromedp.CSS(sel))
}
func click(sel string) chromedp.Action[chromedp.Void] { return chromedp.Click(chromedp.CSS(sel)) }

// screenshots are taken only with AGENTINFRA_SCREENSHOTS=1, into docs/console/.
func screenshotsOn() bool { return os.Getenv("AGENTINFRA_SCREENSHOTS") == "1" }

func saveScreenshot(t *testing.T, name string, png []byte) {
	t.Helper()
	dir := filepath.Join("..", "docs", "console")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// steady runs each step as a person would do it on a live page: a live
// refresh may replace the element between the step's query and its action
// ("Could not find node with given id"); the step, which did nothing then,
// runs again on the new element (the page keeps what was typed or chosen).
func steady(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	for _, step := range steps {
		var err error
		for attempt := 0; attempt < 20; attempt++ {
			if err = chromedp.Do(ctx, step); err == nil || !staleNode(err) {
				break
			}
		}
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
}

// clickUntil clicks sel until want is visible: a live refresh that
// replaces the button between the mouse's press and its release swallows
// the click without an error (the page never changes), so after a while
// without want the person clicks again — as people do.
func clickUntil(t *testing.T, ctx context.Context, what, sel, want string) {
	t.Helper()
	var err error
	for attempt := 0; attempt < 4; attempt++ {
		steady(t, ctx, what, click(sel))
		wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		err = chromedp.Do(wctx, visible(want))
		cancel()
		if err == nil || ctx.Err() != nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("%s: %s never showed: %v", what, want, err)
	}
}

func staleNode(err error) bool {
	s := err.Error()
	return strings.Contains(s, "Could not find node with given id") || strings.Contains(s, "No node with given id")
}
