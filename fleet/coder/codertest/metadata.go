package codertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/agentinfra/agentinfra/fleet/coder"
	"github.com/agentinfra/agentinfra/fleet/metadata"
)

// Routes of the workspace metadata, keys of SetFault.
const (
	RouteWatchMetadata = "GET /api/v2/workspaceagents/{id}/watch-metadata"
	// RouteMetadataApp is any request to the metadata app behind the app
	// proxy (path and subdomain alike).
	RouteMetadataApp = "GET metadata-app"
)

// metadataState is what tests gave workspaces, by agent ID (stable across
// builds).
type metadataState struct {
	agent map[string][]coder.WorkspaceAgentMetadata
}

// SetAgentMetadata gives the owner's workspace name Coder agent metadata
// (a template's coder_agent metadata blocks with their latest results),
// served on RouteWatchMetadata. An item's collected_at is set to the
// fake's clock when the test left it zero and gave a value or an error;
// otherwise it stays zero, as for a script the agent has not run yet.
func (s *Server) SetAgentMetadata(name string, items ...coder.WorkspaceAgentMetadata) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.find(s.Owner, name)
	if w == nil {
		return fmt.Errorf("codertest: no workspace %q", name)
	}
	if s.meta.agent == nil {
		s.meta.agent = map[string][]coder.WorkspaceAgentMetadata{}
	}
	s.meta.agent[w.agentID] = append([]coder.WorkspaceAgentMetadata{}, items...)
	return nil
}

// SetMetadataApp gives the owner's workspace name a metadata app (slug
// coder.DefaultMetadataAppSlug) served by h behind the app proxy: h sees
// the path after the app's prefix and no session token, as behind Coder's
// proxy. See StaticMetadata, or metadata.Handler for the real one.
func (s *Server) SetMetadataApp(name string, h http.Handler) error {
	return s.SetApp(name, AppOptions{Slug: coder.DefaultMetadataAppSlug, DisplayName: "agentinfra metadata", Hidden: true, Route: RouteMetadataApp}, h)
}

// StaticMetadata serves md as metadata.Handler would: a canned app for
// machines without go-task.
func StaticMetadata(md metadata.Metadata) http.Handler {
	md.Fields = md.FieldsOrEmpty()
	if md.Names == nil {
		md.Names = []string{}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, md)
	})
}

// watchMetadata streams an agent's metadata as Coder does: server-sent
// events, a ping then a data event with the whole list, and the stream
// stays open until the client leaves. It locks s.mu only to read, never
// while the stream is open.
func (s *Server) watchMetadata(w http.ResponseWriter, r *http.Request) {
	if s.fault(RouteWatchMetadata, w, r) {
		return
	}
	if r.Header.Get(coder.SessionTokenHeader) != s.Token {
		writeError(w, http.StatusUnauthorized, signedOut, "")
		return
	}
	id := r.PathValue("id")
	if !isUUID(id) {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("Invalid UUID %q.", id), fmt.Sprintf("invalid UUID length: %d", len(id)))
		return
	}
	s.mu.Lock()
	found := false
	for _, ws := range s.wss {
		found = found || ws.agentID == id
	}
	items := append([]coder.WorkspaceAgentMetadata{}, s.meta.agent[id]...)
	for i := range items {
		res := &items[i].Result
		if res.CollectedAt.IsZero() && (res.Value != "" || res.Error != "") {
			res.CollectedAt = s.now
		}
	}
	s.mu.Unlock()
	if !found {
		writeError(w, http.StatusNotFound, "Resource not found or you do not have access to this resource", "")
		return
	}
	data, _ := json.Marshal(items)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	var b strings.Builder
	b.WriteString("event: ping\n\n")
	b.WriteString("event: data\ndata: " + string(data) + "\n\n")
	_, _ = w.Write([]byte(b.String()))
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	select {
	case <-r.Context().Done():
	case <-s.done:
	}
}
