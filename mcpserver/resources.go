package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentinfra/agentinfra/internal/jsonout"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/task"
)

// Resource URIs.
const (
	MatrixURI       = "agentinfra://matrix"
	TaskURIPrefix   = "agentinfra://task/"
	TaskURITemplate = "agentinfra://task/{id}"
)

// TaskResource is the JSON of agentinfra://task/{id}.
type TaskResource struct {
	Task matrix.Task `json:"task"`
	// Dir is the task folder relative to the workspace root ("" when none).
	Dir      string `json:"dir"`
	Archived bool   `json:"archived"`
	// Readme is the task folder's README.md ("" when none).
	Readme string `json:"readme"`
}

func (s *Server) registerResources() {
	s.mcp.AddResource(&mcp.Resource{
		URI:         MatrixURI,
		Name:        "matrix",
		Title:       "Development matrix",
		Description: "The task matrix .agent/DEVELOPMENT_MATRIX.md as Markdown. Subscribe to be told when it changes.",
		MIMEType:    "text/markdown",
	}, s.readMatrix)
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: TaskURITemplate,
		Name:        "task",
		Title:       "Task",
		Description: "One task's row, folder and README as JSON. Subscribe to be told when either changes.",
		MIMEType:    "application/json",
	}, s.readTask)
}

func (s *Server) readMatrix(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	d, err := s.doc(ctx)
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
		URI: MatrixURI, MIMEType: "text/markdown", Text: string(d.Bytes()),
	}}}, nil
}

func (s *Server) readTask(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	id, ok := strings.CutPrefix(uri, TaskURIPrefix)
	if !ok || id == "" {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	r, err := s.taskResource(ctx, id)
	if err != nil {
		if errors.Is(err, matrix.ErrNotFound) {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		return nil, err
	}
	b, err := jsonout.Marshal(r)
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
		URI: uri, MIMEType: "application/json", Text: string(b),
	}}}, nil
}

func (s *Server) taskResource(ctx context.Context, id string) (TaskResource, error) {
	d, err := s.doc(ctx)
	if err != nil {
		return TaskResource{}, err
	}
	t, err := d.Lookup(id)
	if err != nil {
		return TaskResource{}, err
	}
	r := TaskResource{Task: t}
	if t.Skills == nil {
		r.Task.Skills = []string{}
	}
	if t.Agents == nil {
		r.Task.Agents = []string{}
	}
	dir, archived := task.Folder(s.ws, d, t.ID)
	if dir != "" {
		r.Dir, r.Archived = s.rel(dir), archived
		b, err := s.ws.ReadFile(filepath.Join(dir, "README.md")) // inside the workspace only
		switch {
		case err == nil:
			r.Readme = string(b)
		case !errors.Is(err, fs.ErrNotExist):
			return TaskResource{}, fmt.Errorf("read task README: %w", err)
		}
	}
	return r, nil
}

// rel returns p relative to the workspace root, slash-separated.
func (s *Server) rel(p string) string {
	if r, err := filepath.Rel(s.ws.Root, p); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r)
	}
	return p
}

func (s *Server) subscribe(ctx context.Context, uri string) error {
	if uri != MatrixURI && !strings.HasPrefix(uri, TaskURIPrefix) {
		return fmt.Errorf("cannot subscribe to %q: subscribe to %s or %s", uri, MatrixURI, TaskURITemplate)
	}
	s.subMu.Lock()
	s.subs[uri]++
	s.subMu.Unlock()
	if id, ok := strings.CutPrefix(uri, TaskURIPrefix); ok && s.watch != nil {
		s.watch.baseline(ctx, id) // start tracking the task's folder right away
	}
	return nil
}

func (s *Server) unsubscribe(uri string) {
	s.subMu.Lock()
	defer s.subMu.Unlock()
	if s.subs[uri] > 1 {
		s.subs[uri]--
	} else {
		delete(s.subs, uri)
	}
}

// subscribedTasks returns the task IDs with subscribers.
func (s *Server) subscribedTasks() []string {
	s.subMu.Lock()
	defer s.subMu.Unlock()
	var ids []string
	for uri := range s.subs {
		if id, ok := strings.CutPrefix(uri, TaskURIPrefix); ok && id != "" {
			ids = append(ids, id)
		}
	}
	return ids
}
