package trace

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/armadra/ama-rpc/store"
)

// FuzzReadStep checks that whenever readStep answers, it answers what
// store.CustomData reads from the same ama.trace entry.
func FuzzReadStep(f *testing.F) {
	for _, s := range []string{
		`{"customType":"ama.trace","data":{"kind":"step","attempt":1,"assistantEntryId":"a1","requestAt":100,"firstTokenAt":150.5,"doneAt":2e3,"outputTokens":60,"tps":null,"status":"ok"}}`,
		`{"customType":"ama.trace","data":{"kind":"step","attempt":2,"assistantEntryId":"0000a1b2","requestAt":1790000000000,"firstTokenAt":1790000000100,"doneAt":1790000000900,"outputTokens":60,"status":"ok"}}`,
		`{"customType":"ama.trace","data":{"kind":"step","attempt":1,"outputTokens":0}}`,
		`{"customType":"ama.trace","data":{}}`,
		`{"customType":"ama.trace","data":{"kind":"step","attempt":01}}`,
		`{"customType":"ama.trace","data":{"kind":"step","doneAt":1,"requestAt":2}}`,
		`{"customType":"ama.trace","data":{"kind":"step","TPS":12.5,"attempt":1.5}}`,
		`{"customType":"ama.trace","data":{"Kind":"retry_wait","kind":"st\u0065p","doneAt":"x"}}`,
		`{"customType":"ama.trace","data":null}`,
		`{"customType":"ama.trace"}`,
		`{"customType":"ama.trace","data":{"tps":-0.0,"outputTokens":-0}}`,
		`{"customType":"ama.trace","data":{"kind":"step","status":"ok","permissionsDropped":2,"permissions":[{"v":1,"toolCallId":"a"}]}}`,
		`{"customType":"ama.trace","data":{"kind":"step","permissions":[],"zz":1}}`,
		`{"customType":"ama.trace","data":{"kind":"step","permissions": [ ] }}`,
		`{"customType":"ama.trace","data":{"kind":"step","permissions":null}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		if !json.Valid([]byte(body)) || len(body) < 2 || body[0] != '{' {
			return
		}
		var e store.Entry
		if json.Unmarshal([]byte(`{"type":"custom","id":"x","parentId":null,"timestamp":"t",`+body[1:]), &e) != nil {
			return
		}
		var got stepData
		if !readStep(&e, &got) {
			return
		}
		want, err := store.CustomData[stepData](&e)
		if err != nil {
			t.Fatalf("readStep read %s, the decoder fails: %v", e.Body(), err)
		}
		if (got.TPS == nil) != (want.TPS == nil) || got.TPS != nil && *got.TPS != *want.TPS {
			t.Fatalf("%s: tps %v, decoder %v", e.Body(), got.TPS, want.TPS)
		}
		if !bytes.Equal(got.Permissions, want.Permissions) {
			t.Fatalf("%s: permissions %s, decoder %s", e.Body(), got.Permissions, want.Permissions)
		}
		got.TPS, want.TPS = nil, nil
		got.Permissions, want.Permissions = nil, nil
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: readStep %+v, decoder %+v", e.Body(), got, want)
		}
	})
}
