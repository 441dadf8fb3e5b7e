package matrix

import (
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ErrConfig marks a workspace config file agentinfra cannot use.
var ErrConfig = errors.New("bad workspace config")

// ParseVocabularyConfig reads the matrix section of a config file's bytes;
// name is the file name for messages.
func ParseVocabularyConfig(name string, src []byte) (*Vocabulary, error) {
	bad := func(n *yaml.Node, key, format string, a ...any) error {
		return fmt.Errorf("%w: %s:%d: %s: %s", ErrConfig, name, n.Line, key, fmt.Sprintf(format, a...))
	}
	var root yaml.Node
	if err := yaml.Unmarshal(src, &root); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrConfig, name, err)
	}
	if len(root.Content) == 0 {
		return DefaultVocabulary(), nil
	}
	doc := root.Content[0]
	if doc.Kind != yaml.MappingNode {
		return DefaultVocabulary(), nil // not ours to judge: other sections' readers report it
	}
	sec := mappingValue(doc, "matrix")
	if sec == nil || sec.Kind == yaml.ScalarNode && sec.Tag == "!!null" {
		return DefaultVocabulary(), nil
	}
	if sec.Kind != yaml.MappingNode {
		return nil, bad(sec, "matrix", "must be a mapping with statuses, priorities, difficulties, aliases and canonicalize")
	}
	spec := VocabularySpec{Source: name}
	aliasNodes := map[string]*yaml.Node{} // column word → its mapping, checked once the lists are known
	var aliasOrder []string
	for i := 0; i+1 < len(sec.Content); i += 2 {
		k, v := sec.Content[i], sec.Content[i+1]
		key := "matrix." + k.Value
		switch k.Value {
		case "statuses", "priorities", "difficulties":
			list, err := scalarList(v)
			if err != nil {
				return nil, bad(v, key, "%v", err)
			}
			switch k.Value {
			case "statuses":
				spec.Statuses, spec.StatusesLine = list, k.Line
			case "priorities":
				spec.Priorities = list
			default:
				spec.Difficulties = list
			}
		case "aliases":
			if v.Kind != yaml.MappingNode {
				return nil, bad(v, key, "must map status, priority or difficulty to {alias: value}")
			}
			spec.Aliases = map[string]map[string]string{}
			for j := 0; j+1 < len(v.Content); j += 2 {
				ck, cv := v.Content[j], v.Content[j+1]
				ckey := key + "." + ck.Value
				if vocabColumn(ck.Value) == "" {
					return nil, bad(ck, ckey, "unknown column; aliases are for status, priority and difficulty")
				}
				if cv.Kind != yaml.MappingNode {
					return nil, bad(cv, ckey, "must be a mapping {alias: value}, e.g. {M: med}")
				}
				m := map[string]string{}
				for a := 0; a+1 < len(cv.Content); a += 2 {
					ak, av := cv.Content[a], cv.Content[a+1]
					if av.Kind != yaml.ScalarNode || av.Value == "" {
						return nil, bad(av, ckey+"."+ak.Value, "the value must be one word, e.g. med")
					}
					m[ak.Value] = av.Value
				}
				spec.Aliases[ck.Value] = m
				aliasNodes[ck.Value] = cv
				aliasOrder = append(aliasOrder, ck.Value)
			}
		case "canonicalize":
			var b bool
			if err := v.Decode(&b); err != nil {
				return nil, bad(v, key, "must be true or false")
			}
			spec.Canonicalize = b
		default:
			return nil, bad(k, key, "unknown key; the matrix section takes statuses, priorities, difficulties, aliases and canonicalize")
		}
	}
	// Check each column's aliases on its own, so an error has their line.
	for _, col := range aliasOrder {
		one := spec
		one.Aliases = map[string]map[string]string{col: spec.Aliases[col]}
		if _, err := NewVocabulary(one); err != nil {
			return nil, bad(aliasNodes[col], "matrix.aliases."+col, "%s", strings.TrimPrefix(err.Error(), ErrInvalid.Error()+": "))
		}
	}
	voc, err := NewVocabulary(spec)
	if err != nil {
		return nil, bad(sec, "matrix", "%s", strings.TrimPrefix(err.Error(), ErrInvalid.Error()+": "))
	}
	return voc, nil
}

func mappingValue(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func scalarList(n *yaml.Node) ([]string, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, errors.New("must be a list, e.g. [TODO, IN_PROGRESS, DONE]")
	}
	if len(n.Content) == 0 {
		return nil, errors.New("must list at least one value")
	}
	out := make([]string, 0, len(n.Content))
	for _, c := range n.Content {
		if c.Kind != yaml.ScalarNode || strings.TrimSpace(c.Value) == "" {
			return nil, fmt.Errorf("line %d: each value must be one word", c.Line)
		}
		out = append(out, c.Value)
	}
	return out, nil
}
