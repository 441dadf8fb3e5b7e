package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentinfra/agentinfra/matrix"
)

// CatalogEntry is one tool or resource as help texts list it.
type CatalogEntry struct {
	Name    string // tool name, resource URI or URI template
	Summary string // the first clause of its description
}

// Catalog is what every Server offers, listed by an MCP client from the same
// definitions the server registers, so a help text built from it cannot go
// stale. It needs no workspace (enums take the default vocabulary).
func Catalog(ctx context.Context) (tools, resources []CatalogEntry, err error) {
	store := matrix.NewStore("")
	store.Vocab = matrix.DefaultVocabulary()
	s := &Server{store: store, subs: map[string]int{}}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: Name, Version: "catalog"}, nil)
	if err := s.registerTools(); err != nil {
		return nil, nil, err
	}
	s.registerResources()
	s.registerFleetTools()
	s.registerSupervisionTools()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.mcp.Connect(ctx, st, nil)
	if err != nil {
		return nil, nil, err
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "catalog", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		return nil, nil, err
	}
	defer cs.Close()
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, nil, err
		}
		tools = append(tools, CatalogEntry{t.Name, Summary(t.Description)})
	}
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			return nil, nil, err
		}
		resources = append(resources, CatalogEntry{r.URI, Summary(r.Description)})
	}
	for r, err := range cs.ResourceTemplates(ctx, nil) {
		if err != nil {
			return nil, nil, err
		}
		resources = append(resources, CatalogEntry{r.URITemplate, Summary(r.Description)})
	}
	return tools, resources, nil
}

// Summary is the first clause of a description: up to the first ". ", ": "
// or "; ", without a final period.
func Summary(desc string) string {
	end := len(desc)
	for _, sep := range []string{". ", ": ", "; "} {
		if i := strings.Index(desc, sep); i >= 0 && i < end {
			end = i
		}
	}
	return strings.TrimSuffix(strings.TrimSpace(desc[:end]), ".")
}

// AgentCatalog is the opt-in agent toolset (serve --toolsets agent).
func AgentCatalog(ctx context.Context) ([]CatalogEntry, error) {
	s := &Server{subs: map[string]int{}}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: Name, Version: "catalog"}, nil)
	if err := s.registerAgentTools(); err != nil {
		return nil, err
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.mcp.Connect(ctx, st, nil)
	if err != nil {
		return nil, err
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "catalog", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	var tools []CatalogEntry
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		tools = append(tools, CatalogEntry{t.Name, Summary(t.Description)})
	}
	return tools, nil
}

// CatalogText lists the tools and resources one per line, for `agentinfra
// serve --help`, then the opt-in agent toolset's.
func CatalogText(ctx context.Context) (string, error) {
	tools, resources, err := Catalog(ctx)
	if err != nil {
		return "", err
	}
	agent, err := AgentCatalog(ctx)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	section := func(title string, entries []CatalogEntry) {
		w := 0
		for _, e := range entries {
			w = max(w, len(e.Name))
		}
		fmt.Fprintf(&b, "%s:\n", title)
		for _, e := range entries {
			fmt.Fprintf(&b, "  %-*s  %s\n", w, e.Name, e.Summary)
		}
	}
	section("Tools", tools)
	b.WriteString("\n")
	section("Resources", resources)
	b.WriteString("\n")
	section("Agent-side tools (--toolsets agent, opt-in)", agent)
	return strings.TrimRight(b.String(), "\n"), nil
}
