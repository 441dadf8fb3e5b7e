package full

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/internal/testing/e2etools"
)

func TestCLIAgentMetadataInShowAndList(t *testing.T) {
	c := newFleetCLI(t)
	e2etools.GoBin(t, "task")
	c.env = append(c.env, e2etools.EnvGoTools+"="+e2etools.GoToolsDir())
	var papi, sony agentJSON
	c.json(&papi, "agent", "create", "papi", "--spec", "s")
	c.json(&sony, "agent", "create", "sony", "--spec", "s")
	c.waitStatus("papi", "idle")
	c.waitStatus("sony", "idle")
	taskfile := `version: '3'
tasks:
  branch:
    desc: The branch checked out.
    meta: { include_in_list: true }
    cmds: [git rev-parse --abbrev-ref HEAD]
  pr:
    desc: The pull request.
    meta: { include_in_list: true }
    cmds: ['echo "no PR for this branch" >&2; exit 1']
  notes:
    meta: {}
    cmds: [echo "two  words"]
`
	if err := os.WriteFile(filepath.Join(papi.Agent.Workspace.Path, "Taskfile.yml"), []byte(taskfile), 0o644); err != nil {
		t.Fatal(err)
	}

	code, out, errOut := c.run("agent", "show", "papi")
	if code != 0 {
		t.Fatalf("show: exit %d: %s", code, errOut)
	}
	t.Logf("agent show papi:\n%s", out)
	for _, re := range []string{`Metadata \(3\):`, `branch +The branch checked out\. \(listed\) +agent/papi\n`,
		`pr +The pull request\. \(listed\) +error: no PR for this branch task: Failed to run task "pr": exit status 1\n`,
		`notes +No description +two words\n`} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("agent show papi: no line matching %q:\n%s", re, out)
		}
	}
	if _, out, _ := c.run("agent", "show", "sony"); !strings.Contains(out, "Metadata:     none (no meta tasks in the worktree's Taskfile)") {
		t.Errorf("agent show sony:\n%s", out)
	}

	// Piped: one tab-separated line per agent, no header, the BRANCH and PR
	// fields last (not notes).
	_, out, _ = c.run("agent", "list")
	t.Logf("agent list:\n%s", out)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !regexp.MustCompile(`^papi\tidle\t.*\tagent/papi\t\(error\)$`).MatchString(lines[0]) ||
		!regexp.MustCompile(`^sony\tidle\t.*\t-\t-$`).MatchString(lines[1]) {
		t.Errorf("agent list: want BRANCH and PR fields (not notes):\n%s", out)
	}
	_, out, _ = c.run("agent", "list", "--no-metadata")
	if strings.Count(strings.SplitN(out, "\n", 2)[0], "\t") != 4 {
		t.Errorf("agent list --no-metadata:\n%s", out)
	}
	var list struct {
		Agents []struct {
			Name          string             `json:"name"`
			MetadataCount *int               `json:"metadata_count"`
			Metadata      map[string]*string `json:"metadata"`
		} `json:"agents"`
	}
	c.json(&list, "agent", "list")
	if a := list.Agents[0]; a.Name != "papi" || a.MetadataCount == nil || *a.MetadataCount != 3 || len(a.Metadata) != 2 ||
		a.Metadata["pr"] != nil || a.Metadata["branch"] == nil || *a.Metadata["branch"] != "agent/papi" {
		t.Errorf("agent list --json: %+v", list.Agents[0])
	}
}
