package metadata

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestHandlerServesTheCollection(t *testing.T) {
	dir := workspaceWith(t, "  pr:\n    desc: The PR.\n    meta: { include_in_list: true }\n    cmds: [echo 7]\n  bad:\n    meta: 3\n")
	srv := httptest.NewServer(Handler(NewCollector(Options{TaskBinary: taskBin(t)}), dir))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got Metadata
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != 200 {
		t.Fatalf("status %d, %v", resp.StatusCode, err)
	}
	if val(got.Fields["pr"]) != "7" || !got.Fields["pr"].Schema.IncludeInList || errOf(got.Fields["bad"]) == "" || len(got.Names) != 2 {
		t.Fatalf("%+v", got)
	}
	if resp, _ := http.Post(srv.URL, "text/plain", nil); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("POST: %d", resp.StatusCode)
	}
}
