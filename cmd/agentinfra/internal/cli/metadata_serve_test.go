package cli

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/fleet/metadata"
	"github.com/agentinfra/agentinfra/internal/testing/e2etools"
)

// startMetadataServe runs `agentinfra metadata serve` as a real process on a
// free loopback port and returns its URL; the process is stopped with
// SIGTERM at the end and must exit 0.
func startMetadataServe(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(taskBinary(t), append([]string{"metadata", "serve", "--addr", "127.0.0.1:0", "--dir", dir}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stderr)
	if !lines.Scan() {
		_ = cmd.Process.Kill()
		t.Fatalf("metadata serve printed nothing: %v", cmd.Wait())
	}
	first := lines.Text()
	_, url, ok := strings.Cut(first, " at ")
	if !ok || !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.Contains(first, dir) {
		_ = cmd.Process.Kill()
		t.Fatalf("unexpected first line %q", first)
	}
	go func() {
		for lines.Scan() {
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("metadata serve did not exit cleanly on SIGTERM: %v", err)
			}
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			t.Error("metadata serve did not stop on SIGTERM")
		}
	})
	return url
}

func getMetadata(t *testing.T, url string) metadata.Metadata {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var md metadata.Metadata
	if err := json.NewDecoder(resp.Body).Decode(&md); err != nil {
		t.Fatal(err)
	}
	return md
}

// TestMetadataServeWithoutTaskfile: a workspace without a Taskfile answers
// no fields, not an error.
func TestMetadataServeWithoutTaskfile(t *testing.T) {
	dir := t.TempDir()
	md := getMetadata(t, startMetadataServe(t, dir, nil))
	if md.Count() != 0 || md.Fields == nil || md.Err != "" || md.Taskfile != "" {
		t.Fatalf("got %+v", md)
	}
}

// TestMetadataServeRunsTheTaskfile: the served JSON is the collection of
// the workspace's meta tasks, a hanging field bounded by --timeout.
func TestMetadataServeRunsTheTaskfile(t *testing.T) {
	e2etools.GoBin(t, "task")
	dir := t.TempDir()
	taskfile := "version: '3'\n\ntasks:\n" +
		"  branch:\n    desc: The branch.\n    meta: { include_in_list: true }\n    cmds: [echo fix/login]\n" +
		"  ci:\n    meta: {}\n    cmds: [sleep 30]\n" +
		"  lint:\n    cmds: [exit 1]\n"
	if err := os.WriteFile(filepath.Join(dir, "Taskfile.yml"), []byte(taskfile), 0o644); err != nil {
		t.Fatal(err)
	}
	url := startMetadataServe(t, dir, []string{e2etools.EnvGoTools + "=" + e2etools.GoToolsDir()}, "--timeout", "5s")
	md := getMetadata(t, url) // ci's 30 s sleep ends in the 5 s timeout: its error is checked below
	if strings.Join(md.Names, ",") != "branch,ci" || md.Taskfile != filepath.Join(dir, "Taskfile.yml") {
		t.Fatalf("got %+v", md)
	}
	if b := md.Fields["branch"]; b.Value == nil || *b.Value != "fix/login" || !b.Schema.IncludeInList || b.Schema.Description != "The branch." {
		t.Errorf("branch: %+v", b)
	}
	if ci := md.Fields["ci"]; ci.Value != nil || ci.Error == nil || ci.Schema.Description != "No description" {
		t.Errorf("ci: %+v", ci)
	}
}

// TestMetadataServeRefusals: a non-loopback address without --allow-remote,
// a missing folder and a bad timeout are usage errors (exit 2).
func TestMetadataServeRefusals(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args     []string
		mentions string
	}{
		{[]string{"--addr", "0.0.0.0:7781"}, "not loopback"},
		{[]string{"--addr", ":7781"}, "every interface"},
		{[]string{"--addr", "7781"}, "HOST:PORT"},
		{[]string{"--dir", filepath.Join(dir, "missing")}, "not a folder"},
		{[]string{"--timeout", "0s"}, "positive"},
	} {
		code, _, stderr := runCLI(t, dir, cliOpts{}, append([]string{"metadata", "serve"}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.mentions) {
			t.Errorf("%v: exit %d, stderr %q (want 2 mentioning %q)", tc.args, code, stderr, tc.mentions)
		}
	}
}
