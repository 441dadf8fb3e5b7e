package fleet

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/agentinfra/agentinfra/fleet/metadata"
)

// Metadata values that are JSON numbers, booleans or null are given as
// such, in show's fields and list's values; everything else stays text.
func TestMetadataValuesAreTypedInJSON(t *testing.T) {
	s := func(v string) *string { return &v }
	cases := []struct {
		in   *string
		want string
	}{
		{s("810"), `810`}, {s("-1.5e3"), `-1.5e3`}, {s("true"), `true`}, {s("false"), `false`}, {s("null"), `null`}, {nil, `null`},
		{s("0810"), `"0810"`}, {s("42 apples"), `"42 apples"`}, {s("True"), `"True"`}, {s(`{"a":1}`), `"{\"a\":1}"`},
		{s("[1]"), `"[1]"`}, {s("-"), `"-"`}, {s("1."), `"1."`}, {s("feature/x"), `"feature/x"`}, {s("12345678901234567890123"), `12345678901234567890123`},
	}
	for _, c := range cases {
		b, err := json.Marshal(ListMetadata{"f": c.in})
		if err != nil || string(b) != `{"f":`+c.want+`}` {
			t.Errorf("list value %v: %s, %v; want %s", c.in, b, err, c.want)
		}
		b, err = json.Marshal(MetadataFields{"f": {Value: c.in, Schema: metadata.Schema{Description: "d"}}})
		if want := `{"f":{"value":` + c.want + `,"error":null,"schema":{"description":"d","include_in_list":false}}}`; err != nil || string(b) != want {
			t.Errorf("show value %v: %s, %v; want %s", c.in, b, err, want)
		}
		// What was typed reads back as the text the task printed (but
		// the text "null", which is no value).
		var back MetadataFields
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if got := back["f"].Value; (c.in == nil || *c.in == "null") != (got == nil) || got != nil && *got != *c.in {
			t.Errorf("%v read back as %v", c.in, got)
		}
	}
}

// Every timestamp of a result is UTC to the millisecond, whatever zone and
// precision it came with (Coder answers with its server's offset).
func TestTimestampsAreUTCMilliseconds(t *testing.T) {
	in := time.Date(2026, 11, 21, 15, 7, 0, 123456789, time.FixedZone("CET", 3600))
	got, _ := json.Marshal(Timestamp(in))
	if string(got) != `"2026-11-21T14:07:00.123Z"` {
		t.Errorf("timestamp %s", got)
	}
	whole, _ := json.Marshal(Timestamp(time.Date(2026, 11, 21, 15, 7, 0, 0, time.FixedZone("CET", 3600))))
	if string(whole) != `"2026-11-21T14:07:00Z"` {
		t.Errorf("whole second %s", whole)
	}
	done := in
	r := TaskRun{CreatedAt: in, StartedAt: &in, CompletedAt: &done}.Normalized()
	if r.StartedAt.Location() != time.UTC || r.CompletedAt.Nanosecond() != 123000000 || in.Location() == time.UTC {
		t.Errorf("normalized run %+v (and the input %v must be left as it was)", r, in)
	}
}
