package full

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/internal/regularfile"
	"github.com/agentinfra/agentinfra/slack"
	"github.com/agentinfra/agentinfra/supervision/keepmoving"
	"github.com/agentinfra/agentinfra/workspace"
)

// Issue 27, item 5 (the config side): .agent/config.yaml was read whole,
// whatever its size, by every reader of it (the workspace's config, the
// keep-moving and Slack sections): a file grown by mistake, or a link to
// /dev/zero, was read into memory until the process died. Each reader now
// refuses it, naming the file (and, for a file over the cap, the cap).
func TestConfigFileIsReadWithACap(t *testing.T) {
	readers := map[string]func(ws *workspace.Workspace) error{
		"ws.Config":            func(ws *workspace.Workspace) error { _, err := ws.Config(); return err },
		"keepmoving.Config":    func(ws *workspace.Workspace) error { _, err := keepmoving.LoadConfig(ws); return err },
		"slack.LoadConfig":     func(ws *workspace.Workspace) error { _, err := slack.LoadConfig(ws); return err },
		"agentinfra inbox":     nil,
		"agentinfra task list": nil,
	}
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, path string)
		want  []string // in every error
	}{
		{"a sparse file of 64 MiB", func(t *testing.T, path string) {
			if err := os.Truncate(path, 64<<20); err != nil {
				t.Fatal(err)
			}
		}, []string{".agent/config.yaml", fmt.Sprint(regularfile.MaxConfigBytes), "limit"}},
		{"a link to /dev/zero", func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("/dev/zero", path); err != nil {
				t.Fatal(err)
			}
		}, []string{".agent/config.yaml"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := fixtureWS(t)
			path := filepath.Join(root, ".agent", "config.yaml")
			if err := os.WriteFile(path, []byte("supervision:\n  mode: local\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			tc.setup(t, path)
			for name, read := range readers {
				var msg string
				if read == nil {
					args := strings.Fields(strings.TrimPrefix(name, "agentinfra "))
					code, out, errOut := runCLI(t, root, cliOpts{}, args...)
					if code == 0 {
						t.Errorf("%s: exit 0 with the config as %s:\n%s", name, tc.name, out)
						continue
					}
					msg = errOut
				} else {
					ws, err := workspace.New(root)
					if err != nil {
						t.Fatal(err)
					}
					err = read(ws)
					if err == nil {
						t.Errorf("%s: no error with the config as %s", name, tc.name)
						continue
					}
					msg = err.Error()
				}
				for _, w := range tc.want {
					if !strings.Contains(msg, w) {
						t.Errorf("%s: the error does not say %q:\n%s", name, w, msg)
					}
				}
			}
		})
	}
}
