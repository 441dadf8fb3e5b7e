package runner

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentinfra/agentinfra/internal/fakemodel"
)

func TestZZScratch(t *testing.T) {
	out := os.Getenv("SCRATCH_OUT")
	{
		fake := fakemodel.NewClaude(t, 0)
		req := claudeRequest(t, fake.URL, "USER-PROMPT-XYZ")
		req.SystemPrompt = "ROLE-TEXT-ABC"
		res, err := Exec(context.Background(), ClaudeRunner{}, req, nil)
		mustOK(t, res, err)
		os.WriteFile(filepath.Join(out, "claude.json"), fake.Requests("/v1/messages")[0].Body, 0o644)
	}
	{
		fake := fakemodel.NewCodex(t, 0)
		req := codexRequest(t, fake.URL, "USER-PROMPT-XYZ")
		req.SystemPrompt = "ROLE-TEXT-ABC"
		res, err := Exec(context.Background(), CodexRunner{}, req, nil)
		mustOK(t, res, err)
		os.WriteFile(filepath.Join(out, "codex.json"), fake.Requests("/v1/responses")[0].Body, 0o644)
	}
	{
		fake := fakemodel.NewGemini(t, 0)
		req := geminiRequest(t, fake.URL, "USER-PROMPT-XYZ")
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "GEMINI.md"), []byte("ROLE-TEXT-ABC"), 0o600)
		req.ExtraArgs = append(req.ExtraArgs, "--include-directories", dir)
		res, err := Exec(context.Background(), GeminiRunner{}, req, nil)
		mustOK(t, res, err)
		os.WriteFile(filepath.Join(out, "gemini.json"), fake.Requests(":streamGenerateContent")[0].Body, 0o644)
		req.Session = res.SessionID
		req.Prompt = "SECOND"
		dir2 := t.TempDir()
		os.WriteFile(filepath.Join(dir2, "GEMINI.md"), []byte("ROLE-TEXT-DEF"), 0o600)
		req.ExtraArgs = append(req.ExtraArgs[:len(req.ExtraArgs)-2], "--include-directories", dir2)
		os.RemoveAll(dir)
		res, err = Exec(context.Background(), GeminiRunner{}, req, nil)
		mustOK(t, res, err)
		os.WriteFile(filepath.Join(out, "gemini2.json"), fake.Requests(":streamGenerateContent")[1].Body, 0o644)
	}
}
