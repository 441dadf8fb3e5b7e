package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentinfra/agentinfra/internal/testing/testbin"
	"github.com/agentinfra/agentinfra/internal/testing/testmatrix"
)

// BenchmarkPromptProcess times the whole process `agentinfra prompt ID` on a
// 10,000-row matrix whose mode names ten skills (target: under 20 ms/op):
//
//	go test ./cmd/agentinfra/internal/cli -run '^$' -bench PromptProcess
func BenchmarkPromptProcess(b *testing.B) {
	dir := b.TempDir()
	bin := testbin.Path(b, testbin.Agentinfra)
	root := filepath.Join(dir, "ws")
	promptBenchWorkspace(b, root)
	id := testmatrix.ID(5000)
	for _, args := range [][]string{
		{"prompt", id},
		{"prompt", id, "--skill-format", "full", "--json"},
		{"model", id},
	} {
		b.Run(strings.Join(args, "_"), func(b *testing.B) {
			for b.Loop() {
				cmd := exec.Command(bin, append([]string{"--root", root}, args...)...)
				cmd.Env = []string{"HOME=" + dir}
				out, err := cmd.CombinedOutput()
				if err != nil {
					b.Fatalf("%v: %v\n%s", args, err, out)
				}
			}
		})
	}
}

func promptBenchWorkspace(b *testing.B, root string) {
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	agent := filepath.Join(root, ".agent")
	must(os.MkdirAll(filepath.Join(agent, "agents"), 0o755))
	must(os.WriteFile(filepath.Join(agent, "DEVELOPMENT_MATRIX.md"), testmatrix.Generate(10000, 1), 0o644))
	var slugs []string
	for i := range 10 {
		slug := fmt.Sprintf("skill-%02d", i)
		slugs = append(slugs, slug)
		d := filepath.Join(agent, "skills", slug)
		must(os.MkdirAll(filepath.Join(d, "scripts"), 0o755))
		body := ""
		for j := range 12 {
			body += fmt.Sprintf("## Section %d\n\n%s\n\n", j, strings.Repeat("Some guidance text. ", 20))
		}
		must(os.WriteFile(filepath.Join(d, "SKILL.md"), []byte(fmt.Sprintf("---\nname: Skill %d\ndescription: Benchmark skill %d.\n---\n%s", i, i, body)), 0o644))
		must(os.WriteFile(filepath.Join(d, "scripts", "run.sh"), []byte("echo hi\n"), 0o644))
	}
	for _, s := range []string{"go-testing", "code-review", "matrix-editing"} {
		d := filepath.Join(agent, "skills", s)
		must(os.MkdirAll(d, 0o755))
		must(os.WriteFile(filepath.Join(d, "SKILL.md"), []byte("---\ndescription: d\n---\n## Rules\n"), 0o644))
	}
	for _, m := range []string{"coder", "reviewer", "oracle", "explorer"} {
		must(os.WriteFile(filepath.Join(agent, "agents", m+".md"), []byte("---\nskills: ["+strings.Join(slugs, ", ")+"]\n---\nYou are the "+m+".\n"), 0o644))
	}
}
