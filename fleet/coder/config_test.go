package coder

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestConfigFrom(t *testing.T) {
	dir := t.TempDir()
	private := filepath.Join(dir, "token")
	if err := os.WriteFile(private, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	shared := filepath.Join(dir, "shared-token")
	if err := os.WriteFile(shared, []byte("from-file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o644); err != nil { // whatever the umask
		t.Fatal(err)
	}

	cfg, err := ConfigFrom(env(map[string]string{EnvURL: "https://a.example", EnvToken: "from-env"}), "https://b.example", private)
	if err != nil || cfg.URL != "https://a.example" || cfg.Token != "from-env" {
		t.Errorf("the environment must win: %+v, %v", cfg, err)
	}
	cfg, err = ConfigFrom(env(nil), "https://b.example", private)
	if err != nil || cfg.URL != "https://b.example" || cfg.Token != "from-file" {
		t.Errorf("config and token file: %+v, %v", cfg, err)
	}
	_, err = ConfigFrom(env(nil), "https://b.example", shared)
	if KindOf(err) != KindInvalid || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a token file others can read must be refused: %v", err)
	}
	_, err = ConfigFrom(env(nil), "", private)
	if KindOf(err) != KindInvalid || !strings.Contains(err.Error(), EnvURL) {
		t.Errorf("no URL: %v", err)
	}
	_, err = ConfigFrom(env(map[string]string{EnvURL: "https://a.example"}), "", "")
	if KindOf(err) != KindUnauthorized || !strings.Contains(err.Error(), EnvToken) {
		t.Errorf("no token: %v", err)
	}
	for _, bad := range []string{"coder.example.com", "ftp://x", "https://user:pw@x.example"} {
		if _, err := New(Config{URL: bad, Token: "t"}); KindOf(err) != KindInvalid {
			t.Errorf("URL %q: %v", bad, err)
		}
	}
}

func TestValidateWorkspaceName(t *testing.T) {
	for name, ok := range map[string]bool{
		"papi": true, "web-2": true, "Henk": true, "a": true, strings.Repeat("a", 32): true,
		"": false, strings.Repeat("a", 33): false, "-a": false, "a-": false, "a--b": false,
		"agent-invalid@name": false, "a_b": false, "a.b": false, "new": false, "create": false, "héllo": false,
	} {
		err := ValidateWorkspaceName(name)
		if (err == nil) != ok {
			t.Errorf("ValidateWorkspaceName(%q) = %v, want ok=%v", name, err, ok)
		}
		if err != nil {
			if ce, _ := err.(*Error); ce == nil || ce.Field != "name" || ce.Kind != KindInvalid {
				t.Errorf("%q: %#v", name, err)
			}
		}
	}
}
