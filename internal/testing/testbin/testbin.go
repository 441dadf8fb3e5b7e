// Package testbin builds the programs that tests run as real processes —
// agentinfra with agentinfra-full beside it (it hands its commands over to
// the full binary found there), and the stand-in agent CLI of package
// agentstub — once for every test process of a `go test ./...` run.
//
// `go test ./...` runs each package's tests in a process of its own, so a
// build "once per process" is still one per package. The programs are built
// instead into a cache folder named by a hash of what goes into them (every
// source file of the module but the tests, go.mod, go.sum, the Go version,
// GOOS/GOARCH and the environment that changes a build): the first package
// that needs a program builds it (agentinfra and agentinfra-full together:
// one needs the other), under a file lock; the others, and later runs of an
// unchanged tree, reuse it. An edit gives a new hash, so a test never runs a
// stale binary. Folders not used for a day are removed.
//
// The folder is shared: tests must not write into it (copy a binary out
// first, as agentstub.Install does).
package testbin

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofrs/flock"
)

// The programs, by the name of the file each is built to.
const (
	Agentinfra     = "agentinfra"
	AgentinfraFull = "agentinfra-full"
	Stub           = "stub"
)

// groups are built together, into a folder of their own: a test that needs
// the small stub does not wait for agentinfra-full's link.
var groups = map[string]group{
	Agentinfra:     {"agentinfra", []string{"./cmd/agentinfra", "./cmd/agentinfra/agentinfra-full"}},
	AgentinfraFull: {"agentinfra", []string{"./cmd/agentinfra", "./cmd/agentinfra/agentinfra-full"}},
	Stub:           {"stub", []string{"./internal/testing/agentstub/stub"}},
}

type group struct {
	name     string
	packages []string
}

// EnvCache names the variable that moves the cache (default: the user's
// cache folder, else the temporary folder).
const EnvCache = "AGENTINFRA_TESTBIN_CACHE"

// unused is how long a folder no test has used stays.
const unused = 24 * time.Hour

var (
	mu    sync.Mutex
	built = map[string]result{} // by group, in this process
)

type result struct {
	dir string
	err error
}

// Path is the built program name (Agentinfra, AgentinfraFull, Stub); it
// fails the test when the build does.
func Path(t testing.TB, name string) string {
	t.Helper()
	g, ok := groups[name]
	if !ok {
		t.Fatalf("testbin: no program %q", name)
	}
	mu.Lock()
	r, ok := built[g.name]
	if !ok {
		r.dir, r.err = build(g)
		built[g.name] = r
	}
	mu.Unlock()
	if r.err != nil {
		t.Fatalf("build the test program %s: %v", name, r.err)
	}
	return filepath.Join(r.dir, name)
}

func build(g group) (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	key, err := keyOnce(root)
	if err != nil {
		return "", err
	}
	key += "-" + g.name
	cache := os.Getenv(EnvCache)
	if cache == "" {
		if c, err := os.UserCacheDir(); err == nil {
			cache = filepath.Join(c, "agentinfra-testbin")
		} else {
			cache = filepath.Join(os.TempDir(), "agentinfra-testbin")
		}
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", err
	}
	final := filepath.Join(cache, key)
	lock := flock.New(final + ".lock")
	if err := lock.Lock(); err != nil {
		return "", fmt.Errorf("lock %s: %w", lock.Path(), err)
	}
	defer lock.Unlock()
	now := time.Now()
	if _, err := os.Stat(final); err == nil { // renamed into place only once whole
		os.Chtimes(final, now, now) // in use: not pruned
		return final, nil
	}
	tmp, err := os.MkdirTemp(cache, key+".tmp-")
	if err != nil {
		return "", err
	}
	cmd := exec.Command("go", append([]string{"build", "-o", tmp + string(filepath.Separator)}, g.packages...)...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	if err := os.Rename(tmp, final); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	prune(cache, key, now)
	return final, nil
}

// prune removes the folders (and the locks) of other keys not used for a
// day: older trees' binaries.
func prune(cache, keep string, now time.Time) {
	entries, _ := os.ReadDir(cache)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), keep) {
			continue // this build, its lock
		}
		if fi, err := e.Info(); err == nil && now.Sub(fi.ModTime()) > unused {
			os.RemoveAll(filepath.Join(cache, e.Name()))
		}
	}
}

var (
	keyMu  sync.Mutex
	keyVal string
)

// keyOnce is sourceKey, hashed once per process.
func keyOnce(root string) (string, error) {
	keyMu.Lock()
	defer keyMu.Unlock()
	if keyVal != "" {
		return keyVal, nil
	}
	k, err := sourceKey(root)
	keyVal = k
	return k, err
}

// moduleRoot is the folder of go.mod above this source file.
func moduleRoot() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("cannot tell where package testbin's source is")
	}
	for d := filepath.Dir(file); ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod above %s", file)
		}
	}
}

// sourceKey hashes what goes into a build: every file of the module but
// tests (Go sources and embedded files alike; .git and the installed tools
// are skipped), and the toolchain and environment.
func sourceKey(root string) (string, error) {
	h := sha256.New()
	fmt.Fprintln(h, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	for _, k := range []string{"GOFLAGS", "CGO_ENABLED", "GOEXPERIMENT", "GOTOOLCHAIN"} {
		fmt.Fprintf(h, "%s=%s\n", k, os.Getenv(k))
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if rel == ".git" || rel == ".tools" || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		fmt.Fprintf(h, "%s\x00", filepath.ToSlash(rel))
		_, err = io.Copy(h, f)
		return err
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil))[:24], nil
}
