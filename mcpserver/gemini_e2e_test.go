package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/internal/testing/e2etools"
)

// toolsBin finds an npm tool installed by scripts/install-tools.sh (see e2etools.Bin).
func toolsBin(t *testing.T, name string) string { return e2etools.Bin(t, name) }

// fakeGeminiAPI plays the model: it asks for a call of the MCP task tool
// (list, status TODO), then answers with what the tool returned.
type fakeGeminiAPI struct {
	mu        sync.Mutex
	declared  []string // function names the CLI declared
	called    string   // the function name the model asked for
	toolReply string   // the functionResponse the CLI sent back
}

func (f *fakeGeminiAPI) handler(t *testing.T) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Contents []struct {
				Role  string                       `json:"role"`
				Parts []map[string]json.RawMessage `json:"parts"`
			} `json:"contents"`
			Tools []struct {
				FunctionDeclarations []struct {
					Name string `json:"name"`
				} `json:"functionDeclarations"`
			} `json:"tools"`
		}
		json.Unmarshal(body, &req)
		f.mu.Lock()
		var taskTool string
		for _, tl := range req.Tools {
			for _, d := range tl.FunctionDeclarations {
				if !strings.Contains(strings.Join(f.declared, ","), d.Name) {
					f.declared = append(f.declared, d.Name)
				}
				if d.Name == "task" || d.Name == "mcp_agentinfra_task" {
					taskTool = d.Name
				}
			}
		}
		var reply string
		for _, c := range req.Contents {
			for _, p := range c.Parts {
				if fr, ok := p["functionResponse"]; ok {
					reply = string(fr)
				}
			}
		}
		if reply != "" {
			f.toolReply = reply
		}
		f.mu.Unlock()

		var chunk string
		switch {
		case !strings.HasSuffix(r.URL.Path, ":streamGenerateContent"):
			// Side calls (classifiers, checks): a plain JSON answer.
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":"{}"}]},"finishReason":"STOP"}]}`)
			return
		case reply != "":
			chunk = `{"candidates":[{"content":{"role":"model","parts":[{"text":"The task tool answered."}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":5,"totalTokenCount":15}}`
		case taskTool != "":
			f.mu.Lock()
			f.called = taskTool
			f.mu.Unlock()
			chunk = fmt.Sprintf(`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":%q,"args":{"action":"list","status":"TODO"}}}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":5,"totalTokenCount":15}}`, taskTool)
		default:
			chunk = `{"candidates":[{"content":{"role":"model","parts":[{"text":"No task tool was offered."}]},"finishReason":"STOP"}]}`
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\n\n", chunk)
	}
}

// The real gemini CLI, configured with agentinfra in settings.json
// mcpServers (as docs/mcp.md says), starts `agentinfra serve`, offers its
// tools to the model (a fake Gemini API on 127.0.0.1), calls the task tool
// when the model asks, and hands the structured result back.
func TestGeminiCLIDrivesMCPServer(t *testing.T) {
	if os.Getenv("AGENTINFRA_E2E") != "1" {
		t.Skip("a real gemini CLI session (~20s): set AGENTINFRA_E2E=1")
	}
	gemini := toolsBin(t, "gemini")
	bin := agentinfraBin(t)
	ws := newWorkspace(t, 2)
	rows := loadTasks(t, ws)

	fake := &fakeGeminiAPI{}
	api := httptest.NewServer(fake.handler(t))
	defer api.Close()

	home := t.TempDir()
	settings := map[string]any{
		"security":  map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}, "folderTrust": map[string]any{"enabled": false}},
		"general":   map[string]any{"maxAttempts": 1, "enableAutoUpdate": false, "enableAutoUpdateNotification": false},
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false},
		"mcpServers": map[string]any{"agentinfra": map[string]any{
			"command": bin, "args": []string{"serve"}, "trust": true,
			"env": map[string]string{"AGENTINFRA_ROOT": ws.Root, "AGENTINFRA_GLOBAL_SKILLS": "/nonexistent-global-skills"},
		}},
	}
	b, _ := json.Marshal(settings)
	if err := os.MkdirAll(filepath.Join(home, ".gemini"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, gemini, "-p", "List my TODO tasks.", "-m", "gemini-2.5-flash", "-o", "json",
		"--approval-mode", "yolo", "--skip-trust")
	cmd.Dir = ws.Root
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "GEMINI_CLI_HOME=" + home,
		"GEMINI_API_KEY=test-key", "GOOGLE_GEMINI_BASE_URL=" + api.URL,
		"NO_COLOR=1", "CI=1", "NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost",
	}
	out, err := cmd.Output()
	stderr := ""
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = string(ee.Stderr)
	}
	if err != nil {
		t.Fatalf("gemini: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr)
	}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	t.Logf("functions declared to the model: %v; called %q", fake.declared, fake.called)
	for _, want := range []string{"task", "task_get_context", "format_prompt"} {
		found := false
		for _, d := range fake.declared {
			if d == want || d == "mcp_agentinfra_"+want {
				found = true
			}
		}
		if !found {
			t.Errorf("gemini did not offer the MCP tool %s to the model: %v", want, fake.declared)
		}
	}
	if fake.called == "" {
		t.Fatalf("the model never got a task tool to call; stdout:\n%s\nstderr:\n%s", out, stderr)
	}
	for _, r := range rows {
		if !strings.Contains(fake.toolReply, r.ID) {
			t.Errorf("the tool result gemini returned to the model lacks task %s: %s", r.ID, fake.toolReply)
		}
	}
	var res struct {
		Response string `json:"response"`
	}
	if json.Unmarshal(out, &res) != nil || !strings.Contains(res.Response, "The task tool answered.") {
		t.Errorf("gemini response: %s", out)
	}
}
