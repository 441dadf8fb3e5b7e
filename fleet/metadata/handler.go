package metadata

import (
	"encoding/json"
	"net/http"
)

// Handler serves dir's metadata as JSON ({metadata, names, taskfile,
// error, list_only}) to GET and HEAD (`?fields=list`: only the
// include_in_list fields are run): what agentinfra inside a remote workspace (a
// Coder workspace app) answers, so that a fleet elsewhere reads the same
// fields the local backend collects. It never answers an error status for
// the collection itself: what failed is in the fields.
func Handler(c *Collector, dir string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "use GET", http.StatusMethodNotAllowed)
			return
		}
		scope := AllFields
		if r.URL.Query().Get("fields") == "list" {
			scope = ListFields
		}
		md := c.Collect(r.Context(), dir, scope)
		md.Fields = md.FieldsOrEmpty()
		if md.Names == nil {
			md.Names = []string{}
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_ = json.NewEncoder(w).Encode(md)
	})
}
