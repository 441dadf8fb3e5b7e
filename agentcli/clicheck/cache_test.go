package clicheck

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/internal/testing/agentstub"
)

// Issue 33: before a supervised run its CLI passes the protocol check,
// once per binary as it is (the result cached). A claude that passed at a
// version outside the tested ones runs with the warning that names both
// versions; one at a tested version runs without; one that failed is
// refused, kind unavailable, with what differed and what to do. The stub
// (a claude that asks permission in another shape) would fail a live
// check: each answer here comes from the cache, not from a check again.
func TestRequireWarnsOfAnUntestedVersionAndRefusesAFailedCheck(t *testing.T) {
	bin := agentstub.Named(t, "claude")
	if err := os.WriteFile(bin+".mode", []byte("claude-renamed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"XDG_CACHE_HOME": t.TempDir(), "PATH": os.Getenv("PATH")}
	getenv := func(k string) string { return env[k] }
	key, err := binaryKey("claude", bin)
	if err != nil {
		t.Fatal(err)
	}
	remember := func(c cached) {
		b, _ := json.Marshal(map[string]cached{key: c})
		path := cacheFile(getenv)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	tested := Tested["claude"]

	remember(cached{Version: "2.2.0", OK: true})
	warning, err := Require(ctx, "claude", bin, getenv)
	if err != nil || !strings.HasPrefix(warning, "claude 2.2.0 is not a version agentinfra is tested with ("+tested.String()+")") || !strings.Contains(warning, "agentinfra doctor") {
		t.Errorf("an untested claude that passed: %q %v", warning, err)
	}

	remember(cached{Version: tested.Max, OK: true})
	if warning, err := Require(ctx, "claude", bin, getenv); err != nil || warning != "" {
		t.Errorf("a tested claude that passed: %q %v", warning, err)
	}

	remember(cached{Version: tested.Max, Problem: "permission request: no tool_name"})
	_, err = Require(ctx, "claude", bin, getenv)
	if !errors.Is(err, ErrCheckFailed) || agenterr.KindOf(err) != agenterr.Unavailable ||
		!strings.Contains(err.Error(), "no tool_name") || !strings.Contains(err.Error(), "run `agentinfra doctor`") {
		t.Errorf("a claude that failed the check: %v", err)
	}
}

// A live check that fails is refused but not kept: the failure may be this
// process's environment (a PATH without node), and a cached one refused
// every later supervised run of the machine until the cache was deleted.
func TestAFailedCheckIsNotCached(t *testing.T) {
	bin := agentstub.Named(t, "claude")
	if err := os.WriteFile(bin+".mode", []byte("claude-renamed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"XDG_CACHE_HOME": t.TempDir(), "PATH": os.Getenv("PATH")}
	getenv := func(k string) string { return env[k] }
	if _, err := Require(context.Background(), "claude", bin, getenv); !errors.Is(err, ErrCheckFailed) {
		t.Fatalf("a claude that asks in another shape: %v, want the check failed", err)
	}
	key, err := binaryKey("claude", bin)
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := readCache(cacheFile(getenv))[key]; ok {
		t.Fatalf("the failure was cached: %+v", c)
	}
}
