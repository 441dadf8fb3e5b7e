package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/agentinfra/agentinfra/runner"
)

// PromptLimit is the longest prompt gemini is given, counted as
// JSON text (the prompt escaped as a JSON string): gemini 0.61's
// stream-json output echoes the prompt as its first user message, and
// when that echo is long gemini ends without writing the rest of its
// output — the run prints no result although the model answered. Where
// it breaks depends on the machine: on the loaded 2-core test machine a
// 236 KiB prompt failed (only the first 196,742 bytes of output came,
// 3 × 64 KiB of the echo, the same count in every failure seen) while
// 255 KiB had passed a little earlier; 250 KiB of quotes and newlines
// (escaped: 437 KiB) failed, 140 KiB of them (250 KiB) passed — it is the
// escaped size that counts. 128 KiB stays below everything that failed.
const PromptLimit = 128 * 1024

// PromptError is a prompt that cli cannot take.
type PromptError struct {
	CLI         string
	Bytes       int // the prompt's length
	EscapedSize int // its length as JSON text
	Limit       int
}

func (e *PromptError) Error() string {
	return fmt.Sprintf("the prompt is %d bytes (%d as JSON text), over %s's limit of %d bytes (%d KiB) as JSON text: %s cuts its output short when it echoes a longer prompt; shorten it (put long material in a file of the worktree and name the file), or use claude or codex",
		e.Bytes, e.EscapedSize, e.CLI, e.Limit, e.Limit/1024, e.CLI)
}

// CheckPromptSize refuses a prompt that gemini cannot take (a
// *PromptError).
func CheckPromptSize(prompt string) error {
	if len(prompt) <= PromptLimit/6 {
		return nil // escaping grows a byte to at most 6 (\u00XX)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // as gemini's JSON.stringify: <, > and & stay
	enc.Encode(prompt)
	if n := b.Len() - 3; n > PromptLimit { // less the quotes and newline
		return &PromptError{CLI: runner.CLIGemini, Bytes: len(prompt), EscapedSize: n, Limit: PromptLimit}
	}
	return nil
}
