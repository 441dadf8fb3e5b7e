package full

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentinfra/agentinfra/mcpserver"
	"github.com/agentinfra/agentinfra/workspace"
)

// `serve --help` lists every tool and resource a served workspace registers,
// one line each with the first clause of its description, and nothing else.
func TestServeHelpListsRegisteredTools(t *testing.T) {
	f, out, errb := serveFactory(t, "")
	if code := run(context.Background(), []string{"serve", "--help"}, f); code != 0 {
		t.Fatalf("serve --help exited %d: %s", code, errb)
	}
	help := out.String()

	ws, err := workspace.New(f.Cwd)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcpserver.New(mcpserver.Options{Workspace: ws, Getenv: f.Getenv, Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	want := map[string][]string{} // section → lines
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		want["Tools"] = append(want["Tools"], tl.Name+" "+mcpserver.Summary(tl.Description))
	}
	res, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Resources {
		want["Resources"] = append(want["Resources"], r.URI+" "+mcpserver.Summary(r.Description))
	}
	tmpl, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range tmpl.ResourceTemplates {
		want["Resources"] = append(want["Resources"], r.URITemplate+" "+mcpserver.Summary(r.Description))
	}
	if len(want["Tools"]) < 7 || len(want["Resources"]) < 2 {
		t.Fatalf("the server registers %d tools and %d resources", len(want["Tools"]), len(want["Resources"]))
	}
	for section, lines := range want {
		got := helpSection(help, section)
		if strings.Join(got, "\n") != strings.Join(lines, "\n") {
			t.Errorf("serve --help %s:\n%s\nwant (registered):\n%s\n\nhelp:\n%s", section, strings.Join(got, "\n"), strings.Join(lines, "\n"), help)
		}
	}
	for _, l := range strings.Split(help, "\n") {
		if len(l) > 120 {
			t.Errorf("help line longer than 120 columns: %q", l)
		}
	}
}

// helpSection returns the lines under "TITLE:" up to the next blank line,
// with their padding collapsed to one space.
func helpSection(help, title string) []string {
	var lines []string
	in := false
	space := regexp.MustCompile(`\s+`)
	for _, l := range strings.Split(help, "\n") {
		switch {
		case l == title+":":
			in = true
		case in && strings.TrimSpace(l) == "":
			return lines
		case in:
			lines = append(lines, space.ReplaceAllString(strings.TrimSpace(l), " "))
		}
	}
	return lines
}
