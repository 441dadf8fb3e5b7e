package fakemodel

import "testing"

func TestRolesSplitsEachAPI(t *testing.T) {
	for _, tc := range []struct {
		path, body   string
		system, user string
	}{
		{"/v1beta/models/m:streamGenerateContent",
			`{"systemInstruction":{"parts":[{"text":"sys a"},{"text":"sys b"}]},"contents":[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{"text":"answer"}]},{"role":"user","parts":[{"text":"next"}]}]}`,
			"sys a\n\nsys b", "hi\n\nnext"},
		{"/v1/messages",
			`{"system":[{"type":"text","text":"own"},{"type":"text","text":"role"}],"messages":[{"role":"user","content":[{"type":"text","text":"task"}]},{"role":"assistant","content":"ok"},{"role":"user","content":"more"}]}`,
			"own\n\nrole", "task\n\nmore"},
		{"/v1/messages", `{"system":"plain","messages":[]}`, "plain", ""},
		{"/v1/responses",
			`{"instructions":"base","input":[{"type":"message","role":"developer","content":[{"type":"input_text","text":"role"}]},{"type":"message","role":"user","content":[{"type":"input_text","text":"task"}]},{"type":"function_call_output","output":"x"},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}]}`,
			"base\n\nrole", "task"},
	} {
		r, err := Seen{Path: tc.path, Body: []byte(tc.body)}.Roles()
		if err != nil {
			t.Fatal(err)
		}
		if r.System != tc.system || r.User != tc.user {
			t.Errorf("%s: system %q user %q, want %q %q", tc.path, r.System, r.User, tc.system, tc.user)
		}
	}
	if _, err := (Seen{Path: "/other"}).Roles(); err == nil {
		t.Error("an unknown API should be an error")
	}
	if _, err := (Seen{Path: "/v1/messages", Body: []byte("{")}).Roles(); err == nil {
		t.Error("a body that is not JSON should be an error")
	}
}
