package runner

import (
	"strings"
	"testing"
)

func TestRedaction(t *testing.T) {
	env := RedactEnv([]string{"GEMINI_API_KEY=abc", "HOME=/h", "GITHUB_TOKEN=ghp_x", "DB_PASSWORD=pw", "MY_SECRET=s", "EMPTY_KEY=", "PATH=/bin:/usr/bin", "AWS_SESSION_TOKEN=t"})
	want := "GEMINI_API_KEY=[REDACTED] HOME=/h GITHUB_TOKEN=[REDACTED] DB_PASSWORD=[REDACTED] MY_SECRET=[REDACTED] EMPTY_KEY= PATH=/bin:/usr/bin AWS_SESSION_TOKEN=[REDACTED]"
	if got := strings.Join(env, " "); got != want {
		t.Errorf("env\n got %s\nwant %s", got, want)
	}
	argv := RedactArgv([]string{"codex", "exec", "-c", "model_providers.x.api_key=sk-1", "--api-key", "sk-2", "--token=t3", "-m", "gpt", "--", "my prompt with api_key=zzz"}, 10)
	got := strings.Join(argv, " ")
	if strings.Contains(got, "sk-1") || strings.Contains(got, "sk-2") || strings.Contains(got, "t3") || strings.Contains(got, "zzz") {
		t.Errorf("argv leaks: %s", got)
	}
	if !strings.Contains(got, "-m gpt") || !strings.HasSuffix(got, "{prompt: 26 bytes}") {
		t.Errorf("argv over-redacted: %s", got)
	}
	if g := RedactArgv([]string{"gemini", "--prompt=hello"}, 1); g[1] != "--prompt={prompt: 5 bytes}" {
		t.Errorf("gemini prompt placeholder %q", g[1])
	}
}

func TestHeadTailKeepsBothEnds(t *testing.T) {
	b := newHeadTail(4, 6)
	for _, s := range []string{"ab", "cdefgh", "ijklmnopq", "rs", "t"} {
		b.Write([]byte(s))
	}
	if got, want := string(b.Bytes()), "abcd\n…[10 bytes omitted]…\nopqrst"; got != want {
		t.Errorf("got %q want %q", got, want)
	}
	if b.Total() != 20 {
		t.Errorf("total %d", b.Total())
	}
	small := newHeadTail(4, 6)
	small.Write([]byte("abcdef"))
	if string(small.Bytes()) != "abcdef" {
		t.Errorf("small %q", small.Bytes())
	}
}

func TestReadLinesCutsLongLines(t *testing.T) {
	in := "short\n" + strings.Repeat("x", 200<<10) + "\nlast"
	var got []int
	readLines(strings.NewReader(in), 100<<10, func(l []byte) { got = append(got, len(l)) })
	if len(got) != 3 || got[0] != 5 || got[1] != 100<<10 || got[2] != 4 {
		t.Errorf("line lengths %v", got)
	}
}

func TestClipKeepsRunesWhole(t *testing.T) {
	if got := clip("héllo", 2); got != "h…[5 bytes cut]" {
		t.Errorf("clip = %q", got)
	}
	if got := clip("short", 10); got != "short" {
		t.Errorf("clip = %q", got)
	}
}
