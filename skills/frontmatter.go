package skills

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// FrontMatterError reports a problem in a file's YAML front matter with the
// line in the file (not in the YAML block) where it was found.
type FrontMatterError struct {
	Path string
	Line int // 1-based line in the file; 0 when unknown
	Msg  string
}

func (e *FrontMatterError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: front matter: %s", e.Path, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: front matter: %s", e.Path, e.Msg)
}

// frontMatter is a parsed YAML header: the mapping node (nil when the file has
// none) and the body after it.
type frontMatter struct {
	node      *yaml.Node // mapping node, or nil
	meta      map[string]any
	body      string
	yamlStart int // file line of the first YAML line (the one after the opening ---)
}

// yamlLineRe is compiled on first use: only a broken SKILL.md needs it, and
// every command's start-up would pay for it.
var yamlLineRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`line (\d+)`) })

// parseFrontMatter splits src into an optional "---" delimited YAML header and
// the body. A file that does not start with a "---" line has no front matter.
func parseFrontMatter(path string, src []byte) (*frontMatter, error) {
	src = bytes.TrimPrefix(src, []byte("\xef\xbb\xbf"))
	text := strings.ReplaceAll(string(src), "\r\n", "\n")
	fm := &frontMatter{body: text}
	first, rest, found := strings.Cut(text, "\n")
	if strings.TrimRight(first, " \t") != "---" {
		return fm, nil
	}
	if !found {
		return nil, &FrontMatterError{Path: path, Line: 1, Msg: "opening --- is never closed; end the front matter with a line holding only ---"}
	}
	// Find the closing delimiter line.
	lines := strings.SplitAfter(rest, "\n")
	end := -1
	for i, l := range lines {
		t := strings.TrimRight(l, " \t\n")
		if t == "---" || t == "..." {
			end = i
			break
		}
	}
	if end < 0 {
		return nil, &FrontMatterError{Path: path, Line: 1, Msg: "opening --- is never closed; end the front matter with a line holding only ---"}
	}
	yamlText := strings.Join(lines[:end], "")
	fm.body = strings.Join(lines[end+1:], "")
	fm.yamlStart = 2
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(yamlText), &doc); err != nil {
		return nil, yamlError(path, fm.yamlStart, err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		fm.meta = map[string]any{}
		return fm, nil // empty front matter
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, &FrontMatterError{Path: path, Line: root.Line + fm.yamlStart - 1, Msg: "must be a mapping of keys to values (key: value), not a " + kindName(root.Kind)}
	}
	meta := map[string]any{}
	if err := root.Decode(&meta); err != nil {
		return nil, yamlError(path, fm.yamlStart, err)
	}
	for k, v := range meta {
		meta[k] = jsonSafe(v)
	}
	fm.node = root
	fm.meta = meta
	return fm, nil
}

// jsonSafe turns maps with non-string keys (YAML allows `1: x`) into
// map[string]any, recursively, so Meta always encodes as JSON.
func jsonSafe(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = jsonSafe(e)
		}
		return v
	case map[any]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[fmt.Sprint(k)] = jsonSafe(e)
		}
		return out
	case []any:
		for i, e := range v {
			v[i] = jsonSafe(e)
		}
		return v
	}
	return v
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		return "single value"
	case yaml.AliasNode:
		return "alias"
	}
	return "document"
}

// yamlError turns a yaml error ("yaml: line 3: ...") into one naming the file line.
func yamlError(path string, offset int, err error) error {
	msg := err.Error()
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	line := 0
	if m := yamlLineRe().FindStringSubmatchIndex(msg); m != nil {
		n, _ := strconv.Atoi(msg[m[2]:m[3]])
		// Drop the "line N: " prefix now that the line is in the position.
		rest := strings.TrimPrefix(msg[m[1]:], ":")
		msg = strings.TrimSpace(msg[:m[0]] + rest)
		// yaml v3 reports parser (not scanner) errors with a 0-based line.
		if isParserError(msg) {
			n++
		}
		line = n + offset - 1
	} else if _, ok := err.(*yaml.TypeError); !ok {
		// A syntax error without a line is on the first YAML line.
		line = offset
	}
	return &FrontMatterError{Path: path, Line: line, Msg: msg}
}

// isParserError tells yaml's parser errors, whose line numbers are 0-based,
// from scanner errors, which are 1-based.
func isParserError(msg string) bool {
	return strings.HasPrefix(msg, "did not find expected") || strings.HasPrefix(msg, "found undefined tag handle") ||
		strings.HasPrefix(msg, "found duplicate") || strings.HasPrefix(msg, "found incompatible")
}

// stringField returns a string-valued key of the front matter. A key holding a
// non-scalar value is an error at that key's line.
func (fm *frontMatter) stringField(path, key string) (string, error) {
	n := fm.valueNode(key)
	if n == nil {
		return "", nil
	}
	if n.Kind != yaml.ScalarNode {
		return "", &FrontMatterError{Path: path, Line: n.Line + fm.yamlStart - 1, Msg: fmt.Sprintf("%s must be a single value, not a %s", key, kindName(n.Kind))}
	}
	if n.Tag == "!!null" {
		return "", nil
	}
	return strings.TrimSpace(n.Value), nil
}

// listField accepts a YAML list of scalars or one comma-separated string.
func (fm *frontMatter) listField(path, key string) ([]string, error) {
	n := fm.valueNode(key)
	out := []string{}
	if n == nil {
		return out, nil
	}
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return out, nil
		}
		for _, s := range strings.Split(n.Value, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
		return out, nil
	case yaml.SequenceNode:
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				return nil, &FrontMatterError{Path: path, Line: c.Line + fm.yamlStart - 1, Msg: fmt.Sprintf("%s must be a list of names", key)}
			}
			if s := strings.TrimSpace(c.Value); s != "" {
				out = append(out, s)
			}
		}
		return out, nil
	}
	return nil, &FrontMatterError{Path: path, Line: n.Line + fm.yamlStart - 1, Msg: fmt.Sprintf("%s must be a list of names", key)}
}

func (fm *frontMatter) valueNode(key string) *yaml.Node {
	if fm.node == nil {
		return nil
	}
	for i := 0; i+1 < len(fm.node.Content); i += 2 {
		if fm.node.Content[i].Value == key {
			return fm.node.Content[i+1]
		}
	}
	return nil
}
