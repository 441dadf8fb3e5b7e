// Package jsonout is the one JSON writer of agentinfra's --json output:
// indented two spaces, one value per call, and with <, > and & left as they
// are (encoding/json escapes them by default, which scripts then have to undo).
package jsonout

import (
	"bytes"
	"encoding/json"
	"io"
)

// Write encodes v to w as indented JSON followed by a newline.
func Write(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// Marshal is Write into a byte slice (for files).
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	err := Write(&b, v)
	return b.Bytes(), err
}
