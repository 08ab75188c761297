package acp

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/armadra/ama-rpc/internal/jsonobj"
)

// FuzzIDRoundTrip: for every JSON value that is a JSON-RPC id (number,
// string, null), a request line through idMap.in decodes in jsonrpc2, and
// the answer jsonrpc2 marshals for it carries the id as sent, byte for
// byte (U+2028 and U+2029: the same value), leaving no entry behind.
func FuzzIDRoundTrip(f *testing.F) {
	for _, s := range []string{`0`, `-1`, `1.5`, `1e3`, `-0`, `18446744073709551616`, `9223372036854775807`,
		`"a"`, `"\u0041"`, `"\ud800"`, `null`, ` 7 `, `"<&>"`, "\"\xff\"", "\"\u2028\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		want := bytes.Trim([]byte(id), " \t\r\n") // JSON's white space
		if !json.Valid([]byte(id)) || !mappable(want) || strings.ContainsAny(id, "\n\r") {
			return
		}
		var m idMap
		line, _ := m.in([]byte(`{"jsonrpc":"2.0","id":`+id+`,"method":"m"}`), nil)
		var req jsonrpc2.Request
		if err := json.Unmarshal(line, &req); err != nil {
			t.Fatalf("id %s: the request does not decode: %v (%s)", id, err, line)
		}
		if req.Notif {
			t.Fatalf("id %s: taken for a notification", id)
		}
		result := json.RawMessage(`{}`)
		raw, err := json.Marshal(&jsonrpc2.Response{ID: req.ID, Result: &result})
		if err != nil {
			t.Fatal(err)
		}
		out, err := encodeEnvelopeID(raw, m.out)
		if err != nil {
			t.Fatal(err)
		}
		var got []byte
		jsonobj.Members(bytes.TrimSuffix(out, []byte("\n")), func(k string, v []byte) {
			if k == "id" {
				got = v
			}
		})
		if !bytes.Equal(got, want) {
			var a, b any
			same := bytes.ContainsAny(want, "\u2028\u2029") && json.Unmarshal(got, &a) == nil && json.Unmarshal(want, &b) == nil && a == b
			if !same {
				t.Fatalf("id %s answered as %s", want, got)
			}
		}
		if len(m.sent) != 0 || len(m.byRaw) != 0 {
			t.Fatalf("id %s: %d entries left", want, len(m.sent))
		}
	})
}
