package jsonobj

import (
	"bytes"
	"encoding/json"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// FuzzMembers: Members sees the keys and raw values encoding/json sees.
func FuzzMembers(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1,"b":[1,{"c":"}"}],"a":"x\"y"}`, `{"\u0074ype":"p", "id" : null }`, `{"a":{"b":[[]]},"c":true}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var want map[string]json.RawMessage
		if json.Unmarshal(b, &want) != nil || want == nil {
			return
		}
		got := map[string]string{}
		if !Members(b, func(k string, v []byte) { got[k] = string(v) }) {
			t.Fatalf("members refused %q", b)
		}
		if len(got) != len(want) {
			t.Fatalf("%q: got %v, want %v", b, got, want)
		}
		for k, v := range want {
			if got[k] != string(v) || string(Field(b, k)) != string(v) {
				t.Fatalf("%q: key %q = %q (Field %q), want %q", b, k, got[k], Field(b, k), v)
			}
		}
	})
}

// FuzzElements: Elements sees the raw elements encoding/json sees.
func FuzzElements(f *testing.F) {
	for _, s := range []string{`[]`, ` [ 1 , "a]" , {"b":[2]} ] `, `[[],[[]],{"x":"\""}]`, `[null,true,-1.5e3]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var want []json.RawMessage
		if json.Unmarshal(b, &want) != nil || want == nil {
			return
		}
		var got []string
		if !Elements(b, func(v []byte) { got = append(got, string(v)) }) {
			t.Fatalf("Elements refused %q", b)
		}
		if len(got) != len(want) {
			t.Fatalf("%q: got %q, want %q", b, got, want)
		}
		for i, v := range want {
			if got[i] != string(v) {
				t.Fatalf("%q: element %d = %q, want %q", b, i, got[i], v)
			}
		}
	})
}

// Elements refuses what is not an array, and Members what is not an object.
func TestShapes(t *testing.T) {
	if Elements([]byte(`{"a":1}`), func([]byte) {}) || Members([]byte(`[1]`), func(string, []byte) {}) {
		t.Fatal("a value of the other shape was accepted")
	}
	n := 0
	if !Elements([]byte(`[{"type":"text","text":"a,b]"},{"type":"image"}]`), func([]byte) { n++ }) || n != 2 {
		t.Fatalf("two blocks read as %d", n)
	}
}

// BenchmarkMembers visits the envelope of a command line: a small one, and
// one whose prompt is 16 MiB of base64 (the string scan dominates).
func BenchmarkMembers(b *testing.B) {
	for _, c := range []struct {
		name string
		line []byte
	}{
		{"small", []byte(`{"type":"prompt","id":"c-1","message":"hello there","streamingBehavior":"steer"}`)},
		{"16MiB", []byte(`{"type":"prompt","id":"c-1","images":[{"type":"image","data":"` + strings.Repeat("QUJD", 4<<20) + `","mimeType":"image/png"}]}`)},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.line)))
			b.ReportAllocs()
			for b.Loop() {
				n := 0
				if !Members(c.line, func(string, []byte) { n++ }) || n != 3 && n != 4 {
					b.Fatal(n)
				}
			}
		})
	}
}

func TestScannerTable(t *testing.T) {
	valid := []string{
		`{}`, ` { } `, `[]`, `0`, `-0.5e+3`, `"a\u00e9\n"`, `true`, `null`, `{"a":[1,{"b":null}],"c":"d"}`,
		"\"\xff\"", `{"a":1,"a":2}`, "\t{\"x\" : \r\n 1}\n",
	}
	invalid := []string{
		``, ` `, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `01`, `1.`, `.5`, `1e`, `-`, `"\x"`, `"\u12"`,
		"\"a\tb\"", `{"a":1}}`, `nul`, `tru`, `{} {}`, "\ufeff{}", "\u3000{}", `{'a':1}`, `[1 2]`,
	}
	var s Scanner
	for _, v := range valid {
		if s.Scan([]byte(v)) == Invalid || !json.Valid([]byte(v)) {
			t.Errorf("scan(%q) invalid, json.Valid=%v", v, json.Valid([]byte(v)))
		}
	}
	for _, v := range invalid {
		if s.Scan([]byte(v)) != Invalid || json.Valid([]byte(v)) {
			t.Errorf("scan(%q) valid, json.Valid=%v", v, json.Valid([]byte(v)))
		}
	}
	deep := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	if s.Scan([]byte(deep)) == Invalid || !json.Valid([]byte(deep)) {
		t.Errorf("depth %d rejected", MaxDepth)
	}
	if s.Scan([]byte("["+deep+"]")) != Invalid || json.Valid([]byte("["+deep+"]")) {
		t.Errorf("depth %d accepted", MaxDepth+1)
	}
}

// scanNests are the nested values FuzzScanner asks to record: an object
// under "a", the array under its "b", an object under "c" in that array's
// objects.
var scanNests = []Nest{{Parent: 0, Key: `"a"`}, {Parent: 1, Key: `"b"`, Array: true}, {Parent: 2, Key: `"c"`}}

// FuzzScanner checks the scanner against encoding/json: the same
// validity, for objects the same members, compactness as json.Compact
// sees it; the nested lists are what a scan of the last value so keyed
// records alone; a trusted scan (walk's) finds the same spans.
func FuzzScanner(f *testing.F) {
	for _, seed := range []string{`{"type":"x","id":"1","a":[1,2,{"b":"\u00e9"}]}`, `[1,"2",null]`, `"\"\\"`, `{"a" : 1 , "b":-2.5e3}`,
		`{"a":{"b":[{"c":{"d":1}},2,{"c":[3]}],"b":[]},"a":{"x":1}}`, `{"a":{"b":[{"c":{}}, {"c":{"e":"\"}"}}]},"z":{"a":{}}}`, `[{"a":{"b":[1]}}]`, "{\"k\xc3\xa9\":\"long enough to take the word path \xe2\x80\xa8 x\"}"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := Scanner{Nests: scanNests}
		kind := s.Scan(data)
		if (kind != Invalid) != json.Valid(data) {
			t.Fatalf("scan(%q) kind %q, json.Valid %v", data, kind, json.Valid(data))
		}
		if kind == Invalid {
			if Field(data, "a") != nil {
				t.Fatalf("%q: a field of what is not a valid object", data)
			}
			return
		}
		if high := slices.ContainsFunc(data, func(c byte) bool { return c >= 0x80 }); s.NonASCII != high {
			t.Fatalf("%q: NonASCII %v, has a byte >= 0x80 %v", data, s.NonASCII, high)
		}
		var compact bytes.Buffer
		if json.Compact(&compact, data) != nil || s.Spaced != (compact.Len() != len(bytes.Trim(data, " \t\r\n"))) {
			t.Fatalf("%q: spaced %v, compact %q", data, s.Spaced, compact.Bytes())
		}
		for k, n := range scanNests {
			want, at := []Member{}, -1
			for _, m := range s.Members(n.Parent) {
				if m.KeyStart >= 0 && string(m.Key(data)) == n.Key && (data[m.ValStart] == '[') == n.Array && (data[m.ValStart] == '[' || data[m.ValStart] == '{') {
					want, at = alone(m.Val(data), m.ValStart), m.ValStart
				}
			}
			if got := s.Members(k + 1); !slices.Equal(got, want) || s.At(k+1) != at {
				t.Fatalf("%q: list %d = %v at %d, want %v at %d", data, k+1, got, s.At(k+1), want, at)
			}
		}
		trusted := Scanner{trusted: true}
		if trusted.Scan(data) != kind || !slices.EqualFunc(trusted.Members(0), alone(data, 0), func(a, b Member) bool {
			a.KeyEsc, a.ValEsc, b.KeyEsc, b.ValEsc = false, false, false, false
			return a == b
		}) {
			t.Fatalf("%q: a trusted scan differs", data)
		}
		if kind != Object {
			if Field(data, "a") != nil {
				t.Fatalf("%q: a field of what is not a valid object", data)
			}
			return
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.Token() // {
		for i := 0; dec.More(); i++ {
			k, _ := dec.Token()
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				t.Fatal(err)
			}
			if i >= len(s.Members(0)) {
				t.Fatalf("scanner found %d members, decoder more", len(s.Members(0)))
			}
			m := s.Members(0)[i]
			if !m.KeyIs(data, k.(string)) || !bytes.Equal(m.Val(data), v) {
				t.Fatalf("member %d: %q=%q, decoder %q=%q", i, m.Key(data), m.Val(data), k, v)
			}
		}
	})
}

// alone returns what a scan of v alone records in list 0, as offsets
// into the input v starts at off of.
func alone(v []byte, off int) []Member {
	var s Scanner
	s.Scan(v)
	ms := slices.Clone(s.Members(0))
	for i := range ms {
		if ms[i].KeyStart >= 0 {
			ms[i].KeyStart += off
			ms[i].KeyEnd += off
		}
		ms[i].ValStart += off
		ms[i].ValEnd += off
	}
	if ms == nil {
		ms = []Member{}
	}
	return ms
}

// The visiting functions keep nothing per member or element: an object of
// 100,000 members or an array of as many elements costs what one does.
func TestVisitKeepsNothing(t *testing.T) {
	obj := []byte(`{` + strings.Repeat(`"a":1,`, 100_000) + `"b":[` + strings.Repeat(`2,`, 100_000) + `3]}`)
	var arr []byte
	n := 0
	allocs := testing.AllocsPerRun(3, func() {
		n = 0
		Members(obj, func(k string, v []byte) {
			n++
			if k == "b" {
				arr = v
			}
		})
		Elements(arr, func([]byte) { n++ })
	})
	if n != 200_002 || allocs > 4 {
		t.Fatalf("%d visits, %v allocations", n, allocs)
	}
}

// A Nest whose parent does not come before it is refused, not looped on.
func TestNestOrder(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("a Nest nested in itself was accepted")
		}
	}()
	s := Scanner{Nests: []Nest{{Parent: 0, Key: `"a"`}, {Parent: 2, Key: `"b"`}}}
	s.Scan([]byte(`{"a":{"b":{}}}`))
}

// TestUnquote: Unquote gives encoding/json's text for a literal alone
// (jsonstr.AppendUnquoted's fast way) and for anything else (space
// around a literal, bytes after it, no literal: "" where encoding/json
// fails).
func TestUnquote(t *testing.T) {
	for _, raw := range []string{`""`, `"plain"`, `"a\nb\t\"q\"\\ \/"`, `"\u00e9\u4e16"`, `"\ud83d\ude00"`, `"\ude00"`,
		"\"\xff\xfe ok\"", "\"caf\xc3\xa9\"", `"\u0000"`, ` "lead"`, `"trail" `, "\"nl\"\n", `"ab"cd`, `"ab""`,
		`"open`, `x"`, ``, `"\x"`, "\"a\nb\"", `null`, `12`, `"a" "b"`} {
		var want string
		if err := json.Unmarshal([]byte(raw), &want); err != nil {
			want = ""
		}
		if got := Unquote([]byte(raw)); got != want {
			t.Errorf("Unquote(%q) = %q, want %q", raw, got, want)
		}
	}
}

// A Scanner kept for the next value (a reader's, a pool's) does not keep
// the last one alive: a 40 MiB line pinned until the next one is read
// cost the ACP huge-prompt tests 22-38 MB of peak RSS.
func TestScanKeepsNoInput(t *testing.T) {
	var s Scanner
	freed := make(chan struct{})
	func() {
		b := []byte(`{"a":"` + strings.Repeat("x", 1<<20) + `"}`)
		runtime.AddCleanup(&b[0], func(struct{}) { close(freed) }, struct{}{})
		if s.Scan(b) != Object || len(s.Members(0)) != 1 {
			t.Fatal("scan failed")
		}
	}()
	runtime.GC() // the cleanup is queued when the collection finds b unreachable
	select {
	case <-freed:
	case <-time.After(10 * time.Second):
		t.Fatal("the scanned input is still reachable from the Scanner")
	}
	runtime.KeepAlive(&s)
}
