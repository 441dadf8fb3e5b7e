package full

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// multilineMatrix has a row whose Description goes on with a code block that
// closes on the row's last line, as people write it (issue 19).
const multilineMatrix = "# Matrix\n\n| ID | Status | Pri | Diff | Mode | Skills | Agents | Description | Created | Updated |\n" +
	"|----|--------|-----|------|------|--------|--------|-------------|---------|---------|\n" +
	"| 260121185711 | TODO | P1 | easy | coder | | | First. | 2026-01-21 | 2026-01-21 |\n" +
	"| 260121185712 | TODO | P2 | easy | coder | | | Show a toast when creation fails.\n\n" +
	"```typescript\nconst msg = error?.message || ''; // never `undefined`\nif (!msg) {\n  toast('failed');\n}\n```  | 2026-01-21 | 2026-01-21 |\n" +
	"| 260121185713 | IN_PROGRESS | P1 | easy | coder | | @a | Third. | 2026-01-21 | 2026-01-21 |\n"

const multilineDesc = "Show a toast when creation fails.\n\n```typescript\nconst msg = error?.message || ''; // never `undefined`\nif (!msg) {\n  toast('failed');\n}\n```"

func multilineWorkspace(t *testing.T) string {
	t.Helper()
	root := newValidateWorkspace(t, multilineMatrix)
	if err := os.MkdirAll(filepath.Join(root, ".agent", "tasks", "260121185713_third", "tracking"), 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}

func showJSONDescription(t *testing.T, root, id string) string {
	t.Helper()
	code, out, errOut := runCLI(t, root, cliOpts{}, "task", "show", id, "--json")
	var got struct {
		Task struct{ Description string } `json:"task"`
	}
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil {
		t.Fatalf("task show --json: exit %d, %v, %s", code, err, errOut)
	}
	return got.Task.Description
}

// Item 4: the prompt (so dispatch and the fleet) keeps a Description's line
// breaks: the agent gets the code block as written, `//` comments and all.
func TestPromptKeepsDescriptionLines(t *testing.T) {
	root := multilineWorkspace(t)
	if got := showJSONDescription(t, root, "260121185712"); got != multilineDesc {
		t.Fatalf("task show --json description %q, want %q", got, multilineDesc)
	}
	code, prompt, errOut := runCLI(t, root, cliOpts{}, "prompt", "260121185712")
	if code != 0 {
		t.Fatalf("prompt: exit %d: %s", code, errOut)
	}
	if !strings.Contains(prompt, "\n## Description\n\n"+multilineDesc+"\n") ||
		!strings.Contains(prompt, "- Description: Show a toast when creation fails. (continued under Description below)\n") {
		t.Errorf("the prompt does not carry the Description's lines:\n%s", prompt)
	}
	code, dry, _ := runCLI(t, root, cliOpts{Env: map[string]string{"PATH": ""}}, "dispatch", "260121185712", "--dry-run")
	if code > 1 || !strings.Contains(dry, multilineDesc) {
		t.Errorf("dispatch --dry-run: exit %d, the prompt lacks the code block:\n%s", code, dry)
	}
}

// Item 5: after `validate --fix` every reader shows the row as it read
// before the repair: no literal <br>, no backticks around code lines.
func TestReadersDecodeWhatTheFixWrote(t *testing.T) {
	root := multilineWorkspace(t)
	reads := 0
	read := func() map[string]string {
		reads++
		out := map[string]string{"json": showJSONDescription(t, root, "260121185712")}
		for name, args := range map[string][]string{
			"show":    {"task", "show", "260121185712"},
			"prompt":  {"prompt", "260121185712"},
			"context": {"task", "context", "260121185712"},
			"handoff": {"handoff", "--json", "--out", fmt.Sprintf("handoff%d.md", reads)},
			"list":    {"task", "list", "--json"},
		} {
			code, o, errOut := runCLI(t, root, cliOpts{}, args...)
			if code != 0 {
				t.Fatalf("%v: exit %d: %s", args, code, errOut)
			}
			out[name] = o
		}
		return out
	}
	before := read()
	if code, _, errOut := runCLI(t, root, cliOpts{}, "validate", "--fix"); code != 0 {
		t.Fatalf("validate --fix: exit %d: %s", code, errOut)
	}
	if m := matrixOf(t, root); !strings.Contains(m, "Show a toast when creation fails.<br><br>` ```typescript `<br>`` const msg = error?.message \\|\\| ''; // never `undefined` ``<br>`if (!msg) {`<br>`  toast('failed');`<br>") {
		t.Fatalf("the fix did not write the row as expected:\n%s", m)
	}
	after := read()
	for name, b := range before {
		a := after[name]
		if name == "list" || name == "handoff" {
			// They carry line numbers (and the handoff its time): compare
			// what they say of the description.
			if strings.Contains(a, "<br>") || strings.Contains(a, "` ```") {
				t.Errorf("%s shows what the fix encoded:\n%s", name, a)
			}
			continue
		}
		if a != b {
			t.Errorf("%s reads differently after the fix:\nbefore:\n%s\nafter:\n%s", name, b, a)
		}
	}
	if !strings.Contains(after["context"], "## Description\n\n"+multilineDesc+"\n") {
		t.Errorf("task context lacks the Description's lines:\n%s", after["context"])
	}
}

// Item 6: `task create -d` and `task update -d` keep line breaks, written as
// the fix writes them, and read back as typed.
func TestCreateAndUpdateKeepLineBreaks(t *testing.T) {
	root := multilineWorkspace(t)
	desc := "Retry uploads:\n1. reproduce with `curl | tee`\n2. fix it\n\n```sh\necho '<br>' | wc -c\n```"
	code, out, errOut := runCLI(t, root, cliOpts{}, "task", "create", "-d", desc, "-m", "coder")
	if code != 0 {
		t.Fatalf("create: exit %d: %s", code, errOut)
	}
	id := strings.TrimSpace(out)
	if m := matrixOf(t, root); !strings.Contains(m, "| Retry uploads:<br>1. reproduce with `curl \\| tee`<br>2. fix it<br><br>` ```sh `<br>`echo '<br>' \\| wc -c`<br>` ``` ` |") {
		t.Errorf("create wrote:\n%s", m)
	}
	if got := showJSONDescription(t, root, id); got != desc {
		t.Errorf("create: reads back %q, want %q", got, desc)
	}
	desc2 := "Two lines\nand a typed <br> tag"
	if code, _, errOut := runCLI(t, root, cliOpts{}, "task", "update", id, "-d", desc2); code != 0 {
		t.Fatalf("update: exit %d: %s", code, errOut)
	}
	if got := showJSONDescription(t, root, id); got != desc2 {
		t.Errorf("update: reads back %q, want %q", got, desc2)
	}
	if _, out, _ := runCLI(t, root, cliOpts{}, "validate"); strings.Contains(out, id) {
		t.Errorf("the written row does not validate:\n%s", out)
	}
}
