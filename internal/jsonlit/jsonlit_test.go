package jsonlit

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/internal/alias"
)

// The structs a Lit member stands in for, and their Lit twins.
type (
	plain struct {
		A string  `json:"a"`
		P *string `json:"p"`
		R json.RawMessage
	}
	lits struct {
		A Lit  `json:"a"`
		P *Lit `json:"p"`
		R Raw
	}
)

// decodeBoth decodes data into plain and lits; lits must decode as plain
// does: the same text, the same presence, the same error text.
func decodeBoth(t *testing.T, data []byte) (lits, bool) {
	t.Helper()
	var want plain
	var got lits
	werr, gerr := json.Unmarshal(data, &want), json.Unmarshal(data, &got)
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("%q: error %v, want %v", data, gerr, werr)
	}
	if werr != nil {
		var only struct {
			A Lit `json:"a"`
		}
		var w struct {
			A string `json:"a"`
		}
		// With one member the error is the same word for word; with
		// several, a Lit's type error is returned at once where
		// encoding/json names the first of them (the callers decode again
		// for an exact error, see rpc/acp promptInput).
		// (Data that is no object names the struct types, which differ.)
		var te *json.UnmarshalTypeError
		if e1, e2 := json.Unmarshal(data, &w), json.Unmarshal(data, &only); fmt.Sprint(e1) != fmt.Sprint(e2) && !(errors.As(e1, &te) && te.Field == "") {
			t.Fatalf("%q: error %q, want %q", data, e2, e1)
		}
		return got, false
	}
	if got.A.Text() != want.A || (got.P == nil) != (want.P == nil) || (want.P != nil && got.P.Text() != *want.P) || string(got.R) != string(want.R) {
		t.Fatalf("%q: decoded %q %v %q, want %q %v %q", data, got.A.Text(), got.P, got.R, want.A, want.P, want.R)
	}
	return got, true
}

func FuzzLit(f *testing.F) {
	for _, s := range []string{`{"a":"x"}`, `{"a":null}`, `{"a":"x","a":null}`, `{"p":null}`, `{"p":"x","p":null}`, `{"A":"x","a":"y"}`,
		`{"a":1}`, `{"a":true}`, `{"a":{}}`, `{"a":[]}`, `{"p":[1]}`, `{"a":"\u00e9\ud83d\ude00\ud83d x\n\/"}`, "{\"a\":\"\xff\"}",
		`{"r":{"x":"y"}}`, `{"R":null}`, `{"a":"x","p":"y","r":3}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { decodeBoth(t, data) })
}

// A huge literal without escapes is the data's bytes; anything else is a
// copy (a small string does not keep a huge line alive).
func TestTextShares(t *testing.T) {
	b64 := strings.Repeat("QUJD", HugeBytes/4)
	for _, tc := range []struct {
		name, value string
		shared      bool
	}{
		{"huge base64", b64, true},
		{"huge UTF-8", strings.Repeat("é", HugeBytes/2), true},
		{"huge with escapes", strings.Repeat(`QUJ\/`, HugeBytes/4), false},
		{"huge invalid UTF-8", strings.Repeat("\xff", HugeBytes), false},
		{"small", "QUJD", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := []byte(`{"a":"x","A":"` + tc.value + `"}`)
			var got struct{ A Lit }
			var want struct{ A string }
			if json.Unmarshal(data, &got) != nil || json.Unmarshal(data, &want) != nil || got.A.Text() != want.A {
				t.Fatal("decoded differently")
			}
			if _, shared := alias.Offset(got.A.Text(), data); shared != tc.shared {
				t.Fatalf("shares the data: %v, want %v", shared, tc.shared)
			}
			if off, ok := alias.Offset(alias.String(got.A), data); !ok || data[off-1] != ':' {
				t.Fatal("the literal is not a sub-slice of the data")
			}
		})
	}
}
