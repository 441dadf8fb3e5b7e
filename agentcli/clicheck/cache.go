package clicheck

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/gofrs/flock"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/internal/atomicfile"
	"github.com/agentinfra/agentinfra/runner"
)

// ErrCheckFailed refuses a supervised run of a CLI that failed the
// protocol check (kind unavailable).
var ErrCheckFailed = agenterr.New(agenterr.Unavailable, "the agent CLI failed agentinfra's protocol check")

// cacheFile is where the checks' results are kept, per binary and version:
// in the user's cache folder (a run does not pay the check again until the
// binary changes).
func cacheFile(getenv func(string) string) string {
	dir := getenv("XDG_CACHE_HOME")
	if dir == "" {
		if home := getenv("HOME"); home != "" {
			dir = filepath.Join(home, ".cache")
		} else if d, err := os.UserCacheDir(); err == nil {
			dir = d
		} else {
			dir = os.TempDir()
		}
	}
	return filepath.Join(dir, "agentinfra", "cli-checks.json")
}

// cached is one check as the cache keeps it.
type cached struct {
	Version   string    `json:"version"`
	OK        bool      `json:"ok"`
	Problem   string    `json:"problem,omitempty"`
	CheckedAt time.Time `json:"checked_at"`
}

// Key is the cache's key of the binary bin of cli as it is now: a test
// (or a person) that seeds a result writes it under this key.
func Key(cli, bin string) (string, error) { return binaryKey(cli, bin) }

// binaryKey names a binary as it is: its resolved path, size and
// modification time (an upgrade or reinstall changes them).
func binaryKey(cli, bin string) (string, error) {
	real, err := filepath.EvalSymlinks(bin)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	return cli + "|" + real + "|" + strconv.FormatInt(fi.Size(), 10) + "|" + strconv.FormatInt(fi.ModTime().UnixNano(), 10), nil
}

func readCache(path string) map[string]cached {
	out := map[string]cached{}
	if b, err := os.ReadFile(path); err == nil {
		json.Unmarshal(b, &out)
	}
	return out
}

// Require is the check a supervised run of cli (at bin; "" = where
// agentinfra looks it up) passes before it starts: the cached result of
// the binary as it is, or a live check now (cached when it passes). A CLI that failed
// is refused (ErrCheckFailed, kind unavailable) with what differs; one
// outside the tested versions passes with a warning for the run to give
// once. A CLI that is not found is left to the run, which says so.
func Require(ctx context.Context, cli, bin string, getenv func(string) string) (warning string, err error) {
	if bin == "" {
		if bin, err = runner.LookupCLIEnv(cli, getenv); err != nil {
			return "", nil
		}
	}
	key, err := binaryKey(cli, bin)
	if err != nil {
		return "", nil
	}
	path := cacheFile(getenv)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("the protocol checks' cache %s: %w", path, err)
	}
	// One check at a time per machine: runs that start together wait for
	// the first one's result instead of checking the CLI again.
	lock := flock.New(path + ".lock")
	if err := lock.Lock(); err != nil {
		return "", fmt.Errorf("lock the protocol checks' cache %s: %w", path, err)
	}
	defer lock.Unlock()
	c, ok := readCache(path)[key]
	if !ok {
		f := Check(ctx, cli, bin, getenv)
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		c = cached{Version: f.Version, OK: f.OK, Problem: f.Problem, CheckedAt: time.Now().UTC()}
		// Only a pass is kept: a failure may come from this process's
		// environment (a PATH without node or touch failed every later
		// supervised run of the machine once it was cached), so it is
		// checked again next time, and fixing the cause is enough.
		if c.OK {
			all := readCache(path)
			all[key] = c
			b, _ := json.MarshalIndent(all, "", "  ")
			if err := atomicfile.Write(path, b); err != nil {
				return "", fmt.Errorf("save the protocol check of %s in %s: %w", cli, path, err)
			}
		}
	}
	if !c.OK {
		return "", &agenterr.Error{Kind: agenterr.Unavailable, Err: ErrCheckFailed, Reason: fmt.Sprintf(
			"%s %s (%s) failed agentinfra's protocol check, so a supervised run of it is refused (it would run unsupervised or hang): %s; run `agentinfra doctor`",
			cli, orUnknown(c.Version), bin, c.Problem)}
	}
	return rangeWarning(cli, c.Version), nil
}

func orUnknown(v string) string {
	if v == "" {
		return "(version unknown)"
	}
	return v
}
