package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// runTool runs an npm tool with a clean HOME and returns its combined output.
func runTool(t *testing.T, dir string, env []string, bin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, out)
	}
	return string(out)
}

// The registration commands of docs/mcp.md work with the real clients: Claude
// Code's `claude mcp add agentinfra -- agentinfra serve` (and --transport
// http), and Gemini CLI's settings.json mcpServers entry (command and
// httpUrl); each client's health check connects to the server.
func TestClientRegistration(t *testing.T) {
	if os.Getenv("AGENTINFRA_E2E") != "1" {
		t.Skip("real Claude Code and Gemini CLI health checks: set AGENTINFRA_E2E=1")
	}
	bin := agentinfraBin(t)
	ws := newWorkspace(t, 1)
	// The HTTP server with its default token (in a private config folder).
	srv := startHTTPServeEnv(t, bin, ws.Root, append(serveEnv(), "XDG_CONFIG_HOME="+t.TempDir()))
	defer srv.stop()
	url, tok := srv.url, tokenIn(t, srv.stderr)
	// The clients start `agentinfra serve` by name, from PATH, in the project folder.
	path := filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH")

	t.Run("claude", func(t *testing.T) {
		claude := toolsBin(t, "claude")
		home := t.TempDir()
		env := []string{"PATH=" + path, "HOME=" + home, "NO_COLOR=1", "CI=1", "AGENTINFRA_GLOBAL_SKILLS=/nonexistent"}
		runTool(t, ws.Root, env, claude, "mcp", "add", "agentinfra", "--", "agentinfra", "serve")
		runTool(t, ws.Root, env, claude, "mcp", "add", "--transport", "http", "agentinfra-http", url, "--header", "Authorization: Bearer "+tok)
		out := runTool(t, ws.Root, env, claude, "mcp", "list")
		for _, name := range []string{"agentinfra:", "agentinfra-http:"} {
			line := lineWith(out, name)
			if !strings.Contains(line, "Connected") {
				t.Errorf("claude mcp list: %s not connected:\n%s", name, out)
			}
		}
	})

	t.Run("gemini", func(t *testing.T) {
		gemini := toolsBin(t, "gemini")
		home := t.TempDir()
		settings := map[string]any{
			"security": map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}, "folderTrust": map[string]any{"enabled": false}},
			"general":  map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
			"mcpServers": map[string]any{
				"agentinfra":      map[string]any{"command": "agentinfra", "args": []string{"serve"}},
				"agentinfra-http": map[string]any{"httpUrl": url, "headers": map[string]string{"Authorization": "Bearer " + tok}},
			},
		}
		b, _ := json.Marshal(settings)
		os.MkdirAll(filepath.Join(home, ".gemini"), 0o755)
		if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		env := []string{"PATH=" + path, "HOME=" + home, "GEMINI_CLI_HOME=" + home, "GEMINI_API_KEY=x", "NO_COLOR=1", "CI=1",
			"AGENTINFRA_GLOBAL_SKILLS=/nonexistent"}
		out := runTool(t, ws.Root, env, gemini, "mcp", "list")
		for _, name := range []string{"agentinfra:", "agentinfra-http:"} {
			if line := lineWith(out, name); !strings.Contains(line, "Connected") {
				t.Errorf("gemini mcp list: %s not connected:\n%s", name, out)
			}
		}
	})
}

// tokenIn is the token a first `serve --http` printed.
func tokenIn(t *testing.T, stderr string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^([0-9a-f]{64})$`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("serve --http printed no token:\n%s", stderr)
	}
	return m[1]
}

func lineWith(out, s string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}
