package metadata

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// Collect reads the metadata tasks of dir's Taskfile and runs them, at
// most opts.FieldConcurrency at once, each bounded by opts.Timeout. It
// never fails: what cannot be read or run becomes an error in the result.
// No Taskfile → no fields.
func Collect(ctx context.Context, dir string, scope Scope, opts Options) Metadata {
	path, _ := FindTaskfile(dir)
	return collect(ctx, dir, path, scope, opts.withDefaults())
}

func collect(ctx context.Context, dir, path string, scope Scope, o Options) Metadata {
	m := Metadata{Fields: map[string]Field{}, Taskfile: path, ListOnly: scope == ListFields}
	if path == "" {
		return m
	}
	b, err := os.ReadFile(path)
	if err != nil {
		m.Err = fmt.Sprintf("%s: %v", filepath.Base(path), err)
		return m
	}
	specs, err := parseTaskfile(b)
	if err != nil {
		m.Err = fmt.Sprintf("%s: %v", filepath.Base(path), err)
		return m
	}
	bin := o.taskBinary()
	results := make([]Field, len(specs))
	sem := make(chan struct{}, o.FieldConcurrency)
	var wg sync.WaitGroup
	for i, s := range specs {
		switch {
		case s.err != "":
			results[i] = errField(s.err)
		case scope == ListFields && !s.schema.IncludeInList:
			// not run: list_agents shows only its count
		case bin == "":
			results[i] = errField(ErrNoTaskCLI)
		default:
			wg.Add(1)
			go func() {
				defer wg.Done()
				select {
				case sem <- struct{}{}:
				case <-ctx.Done():
					results[i] = errField("not collected: " + ctx.Err().Error())
					return
				}
				defer func() { <-sem }()
				results[i] = runField(ctx, bin, path, dir, s.name, o)
			}()
		}
	}
	wg.Wait()
	for i, s := range specs {
		if _, dup := m.Fields[s.name]; dup {
			continue // YAML keeps the first of two equal keys here; go-task refuses the file anyway
		}
		f := results[i]
		f.Schema = s.schema
		m.Fields[s.name] = f
		m.Names = append(m.Names, s.name)
	}
	return m
}
