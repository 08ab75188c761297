package jsonlit

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/armadra/ama-rpc/internal/alias"
)

// liftee is a struct whose Lits sit at liftPaths.
type liftee struct {
	A  Lit  `json:"a"`
	P  *Lit `json:"p"`
	S  string
	L  []struct{ A Lit } `json:"l"`
	In struct {
		B *Lit `json:"b"`
	} `json:"in"`
}

var liftPaths = []string{"a", "p", "l[].a", "in.b"}

// FuzzLift: decoding Small and giving the Lits their literals back is
// decoding the value itself: the same texts, the same error, whatever
// the duplicates, case-folded keys, nulls and types (every string of
// one byte or more is lifted). A lifted literal is the value's bytes.
func FuzzLift(f *testing.F) {
	for _, s := range []string{`{"a":"x","p":"y","l":[{"a":"z"},{"A":"w"}],"in":{"b":"v"}}`,
		`{"a":"x","a":"y"}`, `{"a":"x","A":"y"}`, `{"A":"x","a":"y"}`, `{"a":"x","a":null}`, `{"p":"x","p":null}`,
		`{"a":"\u00e9x\n","in":{"b":"q","B":1}}`, `{"a":5,"p":"x"}`, `{"l":[{"a":1},{"a":"x"}],"a":"y"}`, "{\"a\":\"\xff\"}",
		`{"s":"x","a":"y"}`, `{"l":{"a":"x"}}`, `{"\u0061":"x"}`, `[{"a":"x"}]`, `"x"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		var want, got liftee
		werr := json.Unmarshal(data, &want)
		l := lift(data, 1, liftPaths)
		small := data
		if l != nil {
			small = l.Small
		}
		gerr := json.Unmarshal(small, &got)
		if fmt.Sprint(werr) != fmt.Sprint(gerr) {
			t.Fatalf("%q: error %v, want %v", data, gerr, werr)
		}
		same := func(what string, g, w Lit) {
			r := l.Lit(g)
			if string(r) != string(w) {
				t.Fatalf("%q: %s = %q, want %q", data, what, r, w)
			}
			if string(r) != string(g) { // given back: the value's own bytes
				if _, ok := alias.Offset(alias.String(r), data); !ok {
					t.Fatalf("%q: %s is not the value's bytes", data, what)
				}
			}
		}
		same("a", got.A, want.A)
		if (got.P == nil) != (want.P == nil) || (got.In.B == nil) != (want.In.B == nil) || len(got.L) != len(want.L) || got.S != want.S {
			t.Fatalf("%q: decoded %+v, want %+v", data, got, want)
		}
		if got.P != nil {
			same("p", *got.P, *want.P)
		}
		if got.In.B != nil {
			same("in.b", *got.In.B, *want.In.B)
		}
		for i := range got.L {
			same("l[].a", got.L[i].A, want.L[i].A)
		}
	})
}

// Lift cuts only literals of LiftMin bytes or more, at the paths named.
func TestLiftSizes(t *testing.T) {
	big := make([]byte, LiftMin)
	for i := range big {
		big[i] = 'a'
	}
	data := []byte(`{"a":"` + string(big) + `","s":"` + string(big) + `","p":"x"}`)
	l := Lift(data, "a", "p")
	if l == nil || len(l.Small) != len(data)-LiftMin || len(l.lits) != 1 {
		t.Fatalf("lifted %v", l)
	}
	if Lift([]byte(`{"a":"x"}`), "a") != nil {
		t.Fatal("a small literal was lifted")
	}
}
