package metadata

import (
	"fmt"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"
)

// TaskfileNames are the names go-task looks for, in its order (v3.54
// taskfile.DefaultTaskfiles).
var TaskfileNames = []string{
	"Taskfile.yml", "taskfile.yml", "Taskfile.yaml", "taskfile.yaml",
	"Taskfile.dist.yml", "taskfile.dist.yml", "Taskfile.dist.yaml", "taskfile.dist.yaml",
}

// FindTaskfile returns the Taskfile of dir and its file info, or "" when
// dir has none.
func FindTaskfile(dir string) (string, os.FileInfo) {
	for _, n := range TaskfileNames {
		p := filepath.Join(dir, n)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, fi
		}
	}
	return "", nil
}

// NoDescription is the description of a field whose task has no desc.
const NoDescription = "No description"

// fieldSpec is a metadata task as the Taskfile declares it.
type fieldSpec struct {
	name   string
	schema Schema
	// err says why the declaration is malformed ("" when it is not): the
	// field is not run.
	err string
}

// parseTaskfile reads the metadata tasks of a Taskfile: the top-level tasks
// with a meta key, in file order. An error means no task could be read.
func parseTaskfile(b []byte) ([]fieldSpec, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 {
		return nil, nil // empty file
	}
	root := deref(doc.Content[0])
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("the Taskfile is not a mapping (line %d)", root.Line)
	}
	tasks := lookup(root, "tasks")
	if tasks == nil || tasks.Kind == yaml.ScalarNode && tasks.Tag == "!!null" {
		return nil, nil
	}
	if tasks.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("tasks is not a mapping (line %d)", tasks.Line)
	}
	var out []fieldSpec
	for i := 0; i+1 < len(tasks.Content); i += 2 {
		name, task := tasks.Content[i].Value, deref(tasks.Content[i+1])
		if task.Kind != yaml.MappingNode { // `name: echo hi` and the like carry no meta
			continue
		}
		meta := lookup(task, "meta")
		if meta == nil {
			continue
		}
		out = append(out, parseField(name, task, meta))
	}
	return out, nil
}

// parseField reads one metadata task; what is malformed becomes its error.
func parseField(name string, task, meta *yaml.Node) fieldSpec {
	f := fieldSpec{name: name, schema: Schema{Description: NoDescription}}
	if d := lookup(task, "desc"); d != nil {
		switch {
		case d.Kind == yaml.ScalarNode && d.Tag == "!!null":
		case d.Kind == yaml.ScalarNode:
			if d.Value != "" {
				f.schema.Description = d.Value
			}
		default:
			f.err = fmt.Sprintf("desc is not text (line %d)", d.Line)
			return f
		}
	}
	switch {
	case meta.Kind == yaml.ScalarNode && meta.Tag == "!!null": // `meta:` alone: the defaults
	case meta.Kind == yaml.MappingNode:
		v := lookup(meta, "include_in_list")
		if v == nil || v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
			break
		}
		if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" || v.Decode(&f.schema.IncludeInList) != nil {
			f.err = fmt.Sprintf("malformed meta (line %d): include_in_list must be true or false, not %s", v.Line, describe(v))
		}
	default:
		f.err = fmt.Sprintf("malformed meta (line %d): it must be a mapping such as { include_in_list: true }, not %s", meta.Line, describe(meta))
	}
	return f
}

// lookup returns the value of key in mapping m (nil when absent).
func lookup(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return deref(m.Content[i+1])
		}
	}
	return nil
}

func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	}
	return fmt.Sprintf("%q", n.Value)
}
