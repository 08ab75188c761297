package acp

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

func TestEncodeEnvelope(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"request key order", `{"params":{"a":1},"method":"m","id":7,"jsonrpc":"2.0"}`, `{"jsonrpc":"2.0","id":7,"method":"m","params":{"a":1}}`},
		{"notification", `{"method":"session/update","params":{"x":"y"}}`, `{"jsonrpc":"2.0","method":"session/update","params":{"x":"y"}}`},
		{"response", `{"id":"s","result":{"b":2,"a":1},"jsonrpc":"2.0"}`, `{"jsonrpc":"2.0","id":"s","result":{"b":2,"a":1}}`},
		{"error", `{"error":{"code":-32601,"message":"no"},"id":3}`, `{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"no"}}`},
		{"html unescaped", `{"id":1,"result":"\u003cb\u003e \u0026 \u003C"}`, `{"jsonrpc":"2.0","id":1,"result":"<b> & <"}`},
		{"escaped backslash kept", `{"id":1,"result":"\\u003c"}`, `{"jsonrpc":"2.0","id":1,"result":"\\u003c"}`},
		{"other escapes kept", `{"id":1,"result":"\u2028\n\"\u0001"}`, `{"jsonrpc":"2.0","id":1,"result":"\u2028\n\"\u0001"}`},
		{"unknown keys last", `{"zeta":1,"id":1,"meta":{},"result":true}`, `{"jsonrpc":"2.0","id":1,"result":true,"meta":{},"zeta":1}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := encodeEnvelope([]byte(c.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want+"\n" {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}

func TestEncodeEnvelopeRejectsNonObjects(t *testing.T) {
	if _, err := encodeEnvelope([]byte(`[1]`)); err == nil {
		t.Fatal("want an error for an array")
	}
}

// FuzzUnescapeHTML: undoing the HTML escapes never changes the value of
// the JSON text, and leaves no \u003c, \u003e or \u0026 escape behind.
func FuzzUnescapeHTML(f *testing.F) {
	for _, s := range []string{`"<a&b>"`, `{"k":"\\u003c"}`, `["\u003c","x\\"]`, `"\u2028"`, `{"<":1}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var v any
		if json.Unmarshal([]byte(s), &v) != nil {
			return
		}
		escaped, err := json.Marshal(v) // encoding/json escapes HTML
		if err != nil {
			return
		}
		out := appendUnescapedHTML(nil, escaped)
		var back any
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("not JSON after unescaping: %q -> %q: %v", escaped, out, err)
		}
		if !reflect.DeepEqual(v, back) {
			t.Fatalf("value changed: %q -> %q", escaped, out)
		}
		if bytes.Contains(out, []byte(`\u003c`)) || bytes.Contains(out, []byte(`\u003e`)) || bytes.Contains(out, []byte(`\u0026`)) {
			if !bytes.Contains(escaped, []byte(`\\u00`)) {
				t.Fatalf("escape left behind: %q", out)
			}
		}
	})
}
