package policy

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// FileError is a policy or allowlist file that does not read as one, said
// where: FILE:LINE:COL: message (as `agentinfra validate` names a matrix's
// problems). Line and Col are 1-based; 0 when the parser gave no place.
type FileError struct {
	File      string
	Line, Col int
	Msg       string
}

func (e *FileError) Error() string {
	switch {
	case e.Line > 0 && e.Col > 0:
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
	case e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return e.File + ": " + e.Msg
}

// yamlLine finds "line N: message" in what the YAML parser says (the
// first one of several unmarshal errors).
var yamlLine = regexp.MustCompile(`line (\d+): (.*)`)

// yamlError places what the YAML parser said of src: its line, and the
// column of the key or value at fault (else of the line's first
// character). The parser's Go type names are left out.
func yamlError(file string, src []byte, msg string) *FileError {
	e := &FileError{File: file, Msg: msg}
	m := yamlLine.FindStringSubmatch(msg)
	if m == nil {
		return e
	}
	e.Line, _ = strconv.Atoi(m[1])
	e.Msg = m[2]
	if i := strings.Index(e.Msg, " in type "); i >= 0 {
		e.Msg = e.Msg[:i]
	}
	lines := strings.Split(string(src), "\n")
	if e.Line < 1 || e.Line > len(lines) {
		return e
	}
	text := lines[e.Line-1]
	e.Col = len(text) - len(strings.TrimLeft(text, " \t")) + 1
	var at string
	switch {
	case strings.HasPrefix(e.Msg, "field ") && strings.HasSuffix(e.Msg, " not found"):
		key := strings.TrimSuffix(strings.TrimPrefix(e.Msg, "field "), " not found")
		e.Msg = fmt.Sprintf("unknown key %q", key)
		at = key
	case strings.Contains(e.Msg, "cannot unmarshal"):
		if v := regexp.MustCompile("`([^`]*)`").FindStringSubmatch(e.Msg); v != nil {
			at = v[1]
			if _, val, ok := strings.Cut(text, ":"); ok && strings.Contains(val, at) {
				e.Col = len(text) - len(val) + strings.Index(val, at) + 1
				return e
			}
		}
	}
	if at != "" {
		if i := strings.Index(text, at); i >= 0 {
			e.Col = i + 1
		}
	}
	return e
}
