package config

import (
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/agentinfra/agentinfra/matrix"
)

// vocabulary decodes the matrix section:
//
//	matrix:
//	  statuses: [TODO, DOING, DONE]      # the values a cell may hold, in order
//	  priorities: [P1, P2, P3]
//	  difficulties: [S, M, L]
//	  aliases:                           # other words people write, per column
//	    status: {WIP: DOING}
//	  canonicalize: true                 # validate --fix writes the values, not the aliases
func (d decoder) vocabulary(sec *yaml.Node) (*matrix.Vocabulary, error) {
	if sec.Kind != yaml.MappingNode {
		return nil, d.bad(sec, "matrix", "must be a mapping with statuses, priorities, difficulties, aliases and canonicalize")
	}
	spec := matrix.VocabularySpec{Source: d.file}
	aliasNodes := map[string]*yaml.Node{} // column word → its mapping, checked once the lists are known
	var aliasOrder []string
	for i := 0; i+1 < len(sec.Content); i += 2 {
		k, v := sec.Content[i], sec.Content[i+1]
		key := "matrix." + k.Value
		switch k.Value {
		case "statuses", "priorities", "difficulties":
			list, err := scalarList(v)
			if err != nil {
				return nil, d.bad(v, key, "%v", err)
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
				return nil, d.bad(v, key, "must map status, priority or difficulty to {alias: value}")
			}
			spec.Aliases = map[string]map[string]string{}
			for j := 0; j+1 < len(v.Content); j += 2 {
				ck, cv := v.Content[j], v.Content[j+1]
				ckey := key + "." + ck.Value
				if !matrix.IsVocabularyColumn(ck.Value) {
					return nil, d.bad(ck, ckey, "unknown column; aliases are for status, priority and difficulty")
				}
				if cv.Kind != yaml.MappingNode {
					return nil, d.bad(cv, ckey, "must be a mapping {alias: value}, e.g. {M: med}")
				}
				m := map[string]string{}
				for a := 0; a+1 < len(cv.Content); a += 2 {
					ak, av := cv.Content[a], cv.Content[a+1]
					if av.Kind != yaml.ScalarNode || av.Value == "" {
						return nil, d.bad(av, ckey+"."+ak.Value, "the value must be one word, e.g. med")
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
				return nil, d.bad(v, key, "must be true or false")
			}
			spec.Canonicalize = b
		default:
			return nil, d.bad(k, key, "unknown key; the matrix section takes statuses, priorities, difficulties, aliases and canonicalize")
		}
	}
	// Check each column's aliases on its own, so an error has their line.
	for _, col := range aliasOrder {
		one := spec
		one.Aliases = map[string]map[string]string{col: spec.Aliases[col]}
		if _, err := matrix.NewVocabulary(one); err != nil {
			return nil, d.bad(aliasNodes[col], "matrix.aliases."+col, "%s", vocabReason(err))
		}
	}
	voc, err := matrix.NewVocabulary(spec)
	if err != nil {
		return nil, d.bad(sec, "matrix", "%s", vocabReason(err))
	}
	return voc, nil
}

// vocabReason is NewVocabulary's complaint without its kind's prefix.
func vocabReason(err error) string {
	return strings.TrimPrefix(err.Error(), matrix.ErrInvalid.Error()+": ")
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
