package codertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/agentinfra/agentinfra/fleet/coder"
)

// Coder's words for a request without a valid session.
const signedOut = "You are signed out or your session has expired. Please sign in again to continue."

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	api := map[string]func(http.ResponseWriter, *http.Request){
		RouteOrganizations:   s.organizations,
		RouteTemplates:       s.templates,
		RoutePresets:         s.presets,
		RouteRichParameters:  s.richParameters,
		RouteWorkspaces:      s.listWorkspaces,
		RouteWorkspace:       s.workspaceByID,
		RouteWorkspaceByName: s.workspaceByName,
		RouteCreateWorkspace: s.createWorkspace,
		RouteCreateBuild:     s.createBuild,
		RouteBuildParameters: s.buildParameters,
		RouteAppHost:         s.appHostHandler,
	}
	for route, h := range api {
		mux.HandleFunc(route, s.guard(route, h))
	}
	mux.HandleFunc(RouteWatchMetadata, s.watchMetadata) // a stream: locks on its own
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "Route not found.", r.Method+" "+r.URL.Path)
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.isAppRequest(r) {
			s.app(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// guard counts the request, plays an injected fault, and requires the
// session token, in that order (a fault hides even a bad token, as a dead
// proxy in front of Coder would).
func (s *Server) guard(route string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.fault(route, w, r) {
			return
		}
		if r.Header.Get(coder.SessionTokenHeader) != s.Token {
			writeError(w, http.StatusUnauthorized, signedOut, "Cookie \"coder_session_token\" or header \"Coder-Session-Token\" must be a valid session token.")
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		h(w, r)
	}
}

// fault counts a request on route and plays its fault; true if it answered.
func (s *Server) fault(route string, w http.ResponseWriter, r *http.Request) bool {
	s.mu.Lock()
	s.requests[route]++
	f := s.faults[route]
	s.mu.Unlock()
	switch f {
	case Fault5xx:
		writeError(w, http.StatusServiceUnavailable, "Service unavailable (injected by codertest).", "")
	case FaultTimeout:
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
	case FaultLoginRedirect:
		loginRedirect(w, r)
	case FaultNotFound:
		writeError(w, http.StatusNotFound, "Resource not found or you do not have access to this resource", "")
	default:
		return false
	}
	return true
}

func loginRedirect(w http.ResponseWriter, r *http.Request) {
	to := "/login?message=" + url.QueryEscape(signedOut) + "&redirect=" + url.QueryEscape(r.URL.RequestURI())
	http.Redirect(w, r, to, http.StatusSeeOther)
}

func (s *Server) organizations(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, []coder.Organization{s.org})
}

func (s *Server) templates(w http.ResponseWriter, _ *http.Request) {
	out := []coder.Template{}
	for _, t := range s.tmpls {
		out = append(out, t.t)
	}
	writeJSON(w, http.StatusOK, out)
}

// versionOr404 finds a template version; Coder answers a malformed UUID
// with 400, an unknown one with 404.
func (s *Server) versionOr404(w http.ResponseWriter, id string) *template {
	if !isUUID(id) {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("Invalid UUID %q.", id), fmt.Sprintf("invalid UUID length: %d", len(id)))
		return nil
	}
	t := s.version(id)
	if t == nil {
		writeError(w, http.StatusNotFound, "Resource not found or you do not have access to this resource", "")
	}
	return t
}

func (s *Server) presets(w http.ResponseWriter, r *http.Request) {
	if t := s.versionOr404(w, r.PathValue("id")); t != nil {
		writeJSON(w, http.StatusOK, t.presets)
	}
}

func (s *Server) richParameters(w http.ResponseWriter, r *http.Request) {
	if t := s.versionOr404(w, r.PathValue("id")); t != nil {
		writeJSON(w, http.StatusOK, t.params)
	}
}

// listWorkspaces filters by q: owner:, name: (a substring, as Coder's),
// template: (a template name); a bare word is a name. Without owner: it
// lists everyone's, as Coder does for an admin token.
func (s *Server) listWorkspaces(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query().Get("q")
	s.lastQ = q
	var owner, name, tmpl string
	for _, term := range strings.Fields(q) {
		key, val, ok := strings.Cut(term, ":")
		if !ok {
			key, val = "name", term
		}
		switch key {
		case "owner":
			owner = val
			if val == "me" {
				owner = s.Owner
			}
		case "name":
			name = val
		case "template":
			tmpl = val
		default:
			writeError(w, http.StatusBadRequest, "Invalid workspace search query.", "",
				coder.ValidationError{Field: "q", Detail: fmt.Sprintf("Query param %q is not a valid query param", key)})
			return
		}
	}
	out := coder.WorkspacesResponse{Workspaces: []coder.Workspace{}}
	for _, ws := range s.wss {
		switch {
		case owner != "" && !strings.EqualFold(ws.ownerName, owner),
			name != "" && !strings.Contains(strings.ToLower(ws.ws.Name), strings.ToLower(name)),
			tmpl != "" && !strings.EqualFold(ws.ws.TemplateName, tmpl):
			continue
		}
		out.Workspaces = append(out.Workspaces, ws.ws)
	}
	out.Count = len(out.Workspaces)
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) workspaceByID(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !isUUID(id) {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("Invalid UUID %q.", id), fmt.Sprintf("invalid UUID length: %d", len(id)))
		return
	}
	ws := s.findID(id)
	if ws == nil {
		writeError(w, http.StatusNotFound, "Resource not found or you do not have access to this resource", "")
		return
	}
	writeJSON(w, http.StatusOK, ws.ws)
}

func (s *Server) user(v string) string {
	if v == "me" {
		return s.Owner
	}
	return v
}

func (s *Server) workspaceByName(w http.ResponseWriter, r *http.Request) {
	ws := s.find(s.user(r.PathValue("user")), r.PathValue("name"))
	if ws == nil {
		writeError(w, http.StatusNotFound, "Resource not found or you do not have access to this resource", "")
		return
	}
	writeJSON(w, http.StatusOK, ws.ws)
}

func (s *Server) createWorkspace(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("org") != s.org.ID {
		writeError(w, http.StatusNotFound, "Resource not found or you do not have access to this resource", "")
		return
	}
	if !strings.EqualFold(s.user(r.PathValue("user")), s.Owner) {
		writeError(w, http.StatusForbidden, "Forbidden.", "only the token's own user (me) can be given workspaces here")
		return
	}
	var req coder.CreateWorkspaceRequest
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields() // strict: a misspelt field fails the test
	if err := dec.Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "Request body must be valid JSON.", err.Error())
		return
	}
	if err := coder.ValidateWorkspaceName(req.Name); err != nil {
		writeError(w, http.StatusBadRequest, "Validation failed.", "", coder.ValidationError{Field: "name",
			Detail: fmt.Sprintf("Validation failed for tag %q with value: %q", "workspace_name", req.Name)})
		return
	}
	t := s.template(req.TemplateID)
	if t == nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("Template %q doesn't exist.", req.TemplateID), "",
			coder.ValidationError{Field: "template_id", Detail: "template not found"})
		return
	}
	if req.TemplateVersionPresetID != "" {
		found := false
		for _, p := range t.presets {
			found = found || p.ID == req.TemplateVersionPresetID
		}
		if !found {
			writeError(w, http.StatusBadRequest, "Invalid template version preset.", "",
				coder.ValidationError{Field: "template_version_preset_id", Detail: "preset not found in the template's active version"})
			return
		}
	}
	for _, p := range req.RichParameterValues {
		known := false
		for _, tp := range t.params {
			known = known || tp.Name == p.Name
		}
		if !known {
			writeError(w, http.StatusBadRequest, "Unable to validate parameters.", "",
				coder.ValidationError{Field: p.Name, Detail: fmt.Sprintf("parameter %q is not defined in the template", p.Name)})
			return
		}
	}
	if s.find(s.Owner, req.Name) != nil {
		writeError(w, http.StatusConflict, fmt.Sprintf("Workspace %q already exists.", req.Name), "",
			coder.ValidationError{Field: "name", Detail: "This value is already in use and should be unique."})
		return
	}
	ws := s.newWorkspace(s.Owner, req.Name, t, req.TemplateVersionPresetID, req.RichParameterValues)
	writeJSON(w, http.StatusCreated, ws.ws)
}

func (s *Server) createBuild(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !isUUID(id) {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("Invalid UUID %q.", id), fmt.Sprintf("invalid UUID length: %d", len(id)))
		return
	}
	ws := s.findID(id)
	if ws == nil {
		writeError(w, http.StatusNotFound, "Resource not found or you do not have access to this resource", "")
		return
	}
	var req coder.CreateWorkspaceBuildRequest
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "Request body must be valid JSON.", err.Error())
		return
	}
	switch req.Transition {
	case coder.TransitionStart, coder.TransitionStop, coder.TransitionDelete:
	default:
		writeError(w, http.StatusBadRequest, "Invalid request.", "", coder.ValidationError{Field: "transition",
			Detail: fmt.Sprintf("Validation failed for tag \"oneof\" with value: %q", req.Transition)})
		return
	}
	if js := ws.ws.LatestBuild.Job.Status; js == coder.JobPending || js == coder.JobRunning {
		writeError(w, http.StatusConflict, "A workspace build is already active.", "")
		return
	}
	s.newBuild(ws, req.Transition, nil)
	writeJSON(w, http.StatusCreated, ws.ws.LatestBuild)
}

// buildParameters answers a build's parameter values, as Coder does: every
// parameter of the template version, with the value the workspace was
// created with, else its preset's, else the parameter's default.
func (s *Server) buildParameters(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !isUUID(id) {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("Invalid UUID %q.", id), fmt.Sprintf("invalid UUID length: %d", len(id)))
		return
	}
	var ws *workspace
	for _, c := range s.wss {
		if c.ws.LatestBuild.ID == id {
			ws = c
		}
	}
	if ws == nil {
		writeError(w, http.StatusNotFound, "Resource not found or you do not have access to this resource", "")
		return
	}
	t := s.template(ws.ws.TemplateID)
	given := map[string]string{}
	if p := ws.ws.LatestBuild.TemplateVersionPresetID; p != nil {
		for _, pr := range t.presets {
			if pr.ID == *p {
				for _, pp := range pr.Parameters {
					given[pp.Name] = pp.Value
				}
			}
		}
	}
	for _, p := range ws.params {
		given[p.Name] = p.Value
	}
	out := []coder.WorkspaceBuildParameter{}
	for _, tp := range t.params {
		v, ok := given[tp.Name]
		if !ok {
			v = tp.DefaultValue
		}
		out = append(out, coder.WorkspaceBuildParameter{Name: tp.Name, Value: v})
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) appHostHandler(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, coder.AppHostResponse{Host: s.appHost})
}

func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
	}
	return true
}
