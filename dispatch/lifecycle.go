package dispatch

import (
	"fmt"
	"strings"
)

// renderDispatch is the tracking note written before the run: what runs, with
// which model and why, and the exact prompt.
func renderDispatch(o *Outcome, p Prompt, stamp string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Dispatch of %s (%s)\n\n", o.ID, stamp)
	fmt.Fprintf(&b, "- CLI: %s (%s)\n", o.CLI, orDefault(o.Binary, "on $PATH"))
	fmt.Fprintf(&b, "- Mode: %s\n", orDefault(o.Mode, "(none)"))
	fmt.Fprintf(&b, "- Model: %s — %s\n", orDefault(o.Model, "(the CLI's default)"), o.ModelReason)
	fmt.Fprintf(&b, "- Approval mode: %s\n", o.ApprovalMode)
	fmt.Fprintf(&b, "- Session: %s\n", orDefault(o.Session, "new"))
	fmt.Fprintf(&b, "- Timeout: %s\n", o.Timeout)
	fmt.Fprintf(&b, "- Status: %s → %s\n", o.StatusBefore, o.StatusAfter)
	fmt.Fprintf(&b, "- Command (secrets redacted, prompt below): `%s`\n", strings.ReplaceAll(DisplayArgv(o.Argv), "`", "'"))
	if len(o.Env) > 0 {
		fmt.Fprintf(&b, "- Environment additions: `%s`\n", strings.ReplaceAll(strings.Join(o.Env, " "), "`", "'"))
	}
	if o.Stdin {
		b.WriteString("- The prompt goes to the CLI's standard input (too long for one argument).\n")
	}
	var parts []string
	for _, pp := range o.PromptParts {
		parts = append(parts, fmt.Sprintf("%s %s %d", pp.Kind, pp.Name, pp.Bytes))
	}
	fmt.Fprintf(&b, "- Prompt: %d bytes (%s)\n", o.PromptBytes, strings.Join(parts, ", "))
	for _, w := range o.Warnings {
		fmt.Fprintf(&b, "- Warning: %s\n", w)
	}
	b.WriteString("\n## Prompt\n\n")
	b.WriteString(fenced(p.Text, "text"))
	return b.String()
}

// renderResult is appended to the tracking note after the run.
func renderResult(o *Outcome) string {
	r := o.Result
	var b strings.Builder
	b.WriteString("\n## Result\n\n")
	fmt.Fprintf(&b, "- Outcome: %s\n", o.Outcome)
	fmt.Fprintf(&b, "- Status: IN_PROGRESS → %s\n", orDefault(o.StatusAfter, "IN_PROGRESS (could not be changed)"))
	if r != nil {
		if r.Error != "" {
			fmt.Fprintf(&b, "- Reason: %s\n", oneLine(r.Error, 2000))
		}
		fmt.Fprintf(&b, "- Exit code: %d\n", r.ExitCode)
		fmt.Fprintf(&b, "- Duration: %d ms\n", r.DurationMS)
		fmt.Fprintf(&b, "- Session: %s\n", orDefault(r.SessionID, "(none reported)"))
		fmt.Fprintf(&b, "- Model: %s\n", orDefault(r.Model, "(not reported)"))
		fmt.Fprintf(&b, "- Tokens: %d in, %d out\n", r.InputTokens, r.OutputTokens)
		fmt.Fprintf(&b, "- Tool calls: %d\n", r.ToolCalls)
		fmt.Fprintf(&b, "- Output: %d bytes stdout, %d bytes stderr\n", r.StdoutBytes, r.StderrBytes)
	}
	for _, w := range o.Warnings {
		fmt.Fprintf(&b, "- Warning: %s\n", w)
	}
	fmt.Fprintf(&b, "- Result file: %s\n", o.ResultFile)
	if r != nil {
		b.WriteString("\n### Response\n\n")
		if r.Response == "" {
			b.WriteString("(empty)\n")
		} else {
			b.WriteString(fenced(r.Response, "text"))
		}
		if !o.resultOK() && strings.TrimSpace(r.StderrTail) != "" {
			b.WriteString("\n### stderr (tail)\n\n")
			b.WriteString(fenced(r.StderrTail, "text"))
		}
	}
	return b.String()
}

func (o *Outcome) resultOK() bool { return o.Result != nil && o.Result.OK() }

// fenced wraps text in a code fence longer than any backtick run inside it.
func fenced(text, lang string) string {
	longest, run := 0, 0
	for i := 0; i < len(text); i++ {
		if text[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", max(3, longest+1))
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return fence + lang + "\n" + text + fence + "\n"
}

// DisplayArgv renders argv for people, quoting elements a shell would split.
// It is never executed.
func DisplayArgv(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && !strings.ContainsAny(a, " \t\n'\"\\$`*?[]{}()<>|&;#~!") {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}
