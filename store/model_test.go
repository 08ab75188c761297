package store

import (
	"encoding/json"
	"testing"
)

// TestDecodeModel: decodeModel reads every model_change body as
// encoding/json does (decodeModelJSON): the shape written here, members
// in another order, repeated, escaped, spelt in another case, null or not
// strings, invalid UTF-8.
func TestDecodeModel(t *testing.T) {
	for _, body := range []string{
		`{"provider":"fake","modelId":"echo"}`,
		`{"provider":"fake","modelId":"echo","channel":"beta"}`,
		`{"modelId":"echo","x":{"provider":"no"},"provider":"fake"}`,
		`{"provider":"a","provider":"b","modelId":"m"}`,
		`{"provider":"f\u00e9\n","modelId":"e\"cho"}`,
		"{\"provider\":\"caf\xff\",\"modelId\":\"m\"}",
		`{"Provider":"fold","modelId":"m"}`,
		`{"provider":"exact","PROVIDER":"fold","modelid":"m"}`,
		`{"provider":null,"modelId":"m"}`,
		`{"provider":5,"modelId":"m"}`,
		`{"provider":"p","modelId":["m"]}`,
		`{"channel":true}`,
		`{}`,
	} {
		e := RawEntry(TypeModelChange, json.RawMessage(body))
		e.ID = "m1"
		got, gerr := decodeModel(e)
		want, werr := decodeModelJSON(e)
		if (gerr == nil) != (werr == nil) || gerr == nil && *got != *want {
			t.Errorf("%s: decodeModel %+v %v, encoding/json %+v %v", body, got, gerr, want, werr)
		}
	}
}
