package mcpserver

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentinfra/agentinfra/agenterr"
)

// Every kind of agenterr.Kinds is one MCP error shape: isError, the text
// "CODE: message" and {error:{code, kind, ...}} with the kind's HTTP
// status as the code — the kinds no tool can raise today (forbidden: no
// tool decides a request) included. A wrapped error keeps its kind; the
// text wrapped around it is not in the message.
func TestErrorResultOfEveryKind(t *testing.T) {
	for _, k := range agenterr.Kinds {
		t.Run(string(k.Kind), func(t *testing.T) {
			err := &agenterr.Error{Kind: k.Kind, Field: "agent_name", Reason: "what went wrong"}
			wrapped := errors.Join(errors.New("words around it"), err)
			r := errorResult(wrapped, []string{"agent_name"})
			var body struct {
				Error wireError `json:"error"`
			}
			b, _ := json.Marshal(r.StructuredContent)
			if err := json.Unmarshal(b, &body); err != nil {
				t.Fatal(err)
			}
			text := r.Content[0].(*mcp.TextContent).Text
			if !r.IsError || body.Error.Code != k.HTTP || body.Error.Kind != string(k.Kind) || body.Error.Field != "agent_name" ||
				text != strconv.Itoa(k.HTTP)+": "+body.Error.Message || strings.Contains(text, "words around it") {
				t.Errorf("kind %s: isError %v, text %q, structured %s; want code %d", k.Kind, r.IsError, text, b, k.HTTP)
			}
		})
	}
}

// A failed fleet call's warnings (a killed command's leftovers it rolled
// back) come with its error: in the structured content next to "error",
// and as "warning:" lines after the text.
func TestErrorResultCarriesTheCallsWarnings(t *testing.T) {
	r := withResultWarnings(errorResult(agenterr.Conflictf("agent papi is busy"), nil), []string{"agent tom's killed create was rolled back"})
	b, _ := json.Marshal(r.StructuredContent)
	var body struct {
		Error    wireError `json:"error"`
		Warnings []string  `json:"warnings"`
	}
	text := r.Content[0].(*mcp.TextContent).Text
	if err := json.Unmarshal(b, &body); err != nil || body.Error.Code != 409 || len(body.Warnings) != 1 ||
		text != "409: agent papi is busy\nwarning: agent tom's killed create was rolled back" {
		t.Errorf("text %q, structured %s (%v)", text, b, err)
	}
}
