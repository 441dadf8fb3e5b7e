package clicheck

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/agentinfra/agentinfra/runner"
)

// Range is the versions of one agent CLI agentinfra's tests run, from Min
// to Max (scripts/install-tools.sh installs Max, which CI tests).
type Range struct {
	// Package is the CLI's npm package.
	Package  string
	Min, Max string
}

// Tested are the versions of the agent CLIs agentinfra is tested with: the
// one place they are written in code. scripts/install-tools.sh pins each
// Max and the docs name them (a test checks both against this table).
var Tested = map[string]Range{
	runner.CLIClaude: {Package: "@anthropic-ai/claude-code", Min: "2.1.330", Max: "2.1.330"},
	runner.CLICodex:  {Package: "@openai/codex", Min: "0.169.0", Max: "0.169.0"},
	runner.CLIGemini: {Package: "@google/gemini-cli", Min: "0.61.0", Max: "0.61.0"},
}

// String is the range as people read it: "2.1.330", or "0.60.0 to 0.61.0".
func (r Range) String() string {
	if r.Min == r.Max {
		return r.Max
	}
	return r.Min + " to " + r.Max
}

// Contains reports whether version v is within the range.
func (r Range) Contains(v string) bool {
	return compare(v, r.Min) >= 0 && compare(v, r.Max) <= 0
}

var versionRE = regexp.MustCompile(`\b(\d+)\.(\d+)\.(\d+)\b`)

// ParseVersion finds the version in what `CLI --version` printed ("2.1.330
// (Claude Code)", "codex-cli 0.169.0", "0.61.0"); "" when there is none.
func ParseVersion(out string) string {
	return versionRE.FindString(out)
}

// compare orders two versions (major.minor.patch) numerically.
func compare(a, b string) int {
	pa, pb := parts(a), parts(b)
	for i := range pa {
		if pa[i] != pb[i] {
			if pa[i] < pb[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

func parts(v string) [3]int {
	var out [3]int
	m := versionRE.FindStringSubmatch(v)
	if m == nil {
		return out
	}
	for i := range out {
		out[i], _ = strconv.Atoi(m[i+1])
	}
	return out
}

// rangeWarning is what a run of cli at version says when the version is
// not one the tests pin ("" when it is).
func rangeWarning(cli, version string) string {
	r, ok := Tested[cli]
	if !ok || version == "" || r.Contains(version) {
		return ""
	}
	return fmt.Sprintf("%s %s is not a version agentinfra is tested with (%s); it passed agentinfra's protocol check, but a change of its protocol may show; `agentinfra doctor` says more",
		cli, version, r)
}

// clean trims what --version printed to one line.
func clean(out string) string {
	out = strings.TrimSpace(out)
	if i := strings.IndexByte(out, '\n'); i >= 0 {
		out = out[:i]
	}
	return out
}
