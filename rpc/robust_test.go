package rpc

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/store"
)

// A result that encoding/json refuses (here NaN) is answered with an
// encode_failed error response instead of vanishing.
func TestUnencodableResultIsAnswered(t *testing.T) {
	var out bytes.Buffer
	s := &Server{log: zap.NewNop(), w: NewWriter(&out, WriterOptions{})}
	id := "x"
	s.ok(&command{id: &id, name: "get_state"}, map[string]float64{"v": math.NaN()})
	s.w.Close()
	var r Response
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("no response line: %q", out.String())
	}
	if r.Success || r.Code != CodeEncodeFailed || r.ID == nil || *r.ID != "x" || r.Command != "get_state" {
		t.Fatalf("got %s", out.String())
	}
}

// Raw results of any depth are written verbatim (encoding/json stops at
// 10000 levels).
func TestRawResultAnyDepth(t *testing.T) {
	const depth = 100000
	raw := strings.Repeat(`[`, depth) + strings.Repeat(`]`, depth)
	id := "t\u2028"
	line, err := encodeOK(&id, "get_tree", rawJSON(raw))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"t\u2028","type":"response","command":"get_tree","success":true,"data":` + raw + "}\n"
	if string(line) != want {
		t.Fatalf("line starts %q", line[:80])
	}
	// The same envelope as the generic encoder.
	generic, _ := Marshal(Response{ID: &id, Type: "response", Command: "get_tree", Success: true, Data: json.RawMessage(`[]`)})
	mine, _ := encodeOK(&id, "get_tree", rawJSON(`[]`))
	if !bytes.Equal(generic, mine) {
		t.Fatalf("envelope %q, generic %q", mine, generic)
	}
}

func TestValidUTF8(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":"ok €"}`:                              `{"a":"ok €"}`,
		"{\"a\":\"\xff\xfe\"}":                      `{"a":"\ufffd\ufffd"}`,
		"{\"a\":\"cut \xe2\x82 x\"}":                `{"a":"cut \ufffd\ufffd x"}`,
		"{\"a\":\"surrogate \xed\xa0\x80\"}":        `{"a":"surrogate \ufffd\ufffd\ufffd"}`,
		"{\"a\":\"sep \u2028\u2029 \xe2\x80\xaa\"}": `{"a":"sep \u2028\u2029 ` + "\u202a" + `"}`,
	} {
		if got := string(ValidUTF8([]byte(in))); got != want {
			t.Errorf("ValidUTF8(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzValidUTF8: the result is valid UTF-8, a valid JSON line stays valid
// JSON, and valid input is returned unchanged.
func FuzzValidUTF8(f *testing.F) {
	f.Add([]byte("{\"a\":\"\xff\"}"))
	f.Add([]byte(`{"a":"€"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		got := ValidUTF8(b)
		if !utf8.Valid(got) {
			t.Fatalf("invalid UTF-8 out of %q", b)
		}
		if utf8.Valid(b) && !hasSeparator(b) && !bytes.Equal(got, b) {
			t.Fatalf("valid input changed")
		}
		if json.Valid(b) && !json.Valid(got) {
			t.Fatalf("%q became invalid JSON: %q", b, got)
		}
	})
}

// FuzzMembers: members sees the keys and raw values encoding/json sees.
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
		if !members(b, func(k string, v []byte) { got[k] = string(v) }) {
			t.Fatalf("members refused %q", b)
		}
		if len(got) != len(want) {
			t.Fatalf("%q: got %v, want %v", b, got, want)
		}
		for k, v := range want {
			if got[k] != string(v) {
				t.Fatalf("%q: key %q = %q, want %q", b, k, got[k], v)
			}
		}
	})
}

// Ids are bounded: a longer one is refused without being echoed.
func TestLongIDRefused(t *testing.T) {
	c, perr := parseCommand([]byte(`{"type":"get_state","id":"` + strings.Repeat("é", 513) + `"}`))
	if perr != "" || c.id != nil || !c.idTooLong {
		t.Fatalf("1026-byte id: %+v %q", c, perr)
	}
	c, _ = parseCommand([]byte(`{"type":"get_state","id":"` + strings.Repeat("\\u00e9", 512) + `"}`))
	if c.id == nil || len(*c.id) != 1024 || c.idTooLong {
		t.Fatalf("1024-byte escaped id refused: %+v", c)
	}
}

// The spliced entry_appended line is the generic encoding, once the writer
// has made both wire-safe.
func TestEntryAppendedSplice(t *testing.T) {
	e := store.RawEntry("custom", json.RawMessage(`{"customType":"x<y>&","data":{"t":"a`+"\u2028"+`b \u00e9 \"q\""}}`))
	e.ID = "id1"
	fast, err := encodeEvent(events.EntryAppended{Entry: e})
	if err != nil {
		t.Fatal(err)
	}
	prefix := []byte(`{"type":"entry_appended"`)
	slow, err := marshalAfter(prefix, events.EntryAppended{Entry: e})
	if err != nil {
		t.Fatal(err)
	}
	slow[len(prefix)] = ','
	if !bytes.Equal(ValidUTF8(fast), ValidUTF8(slow)) {
		t.Fatalf("spliced %s\ngeneric %s", fast, slow)
	}
}

// The read-ahead budget lets one line of any size through, then holds the
// reader until the dispatcher has taken enough.
func TestReadAheadBudget(t *testing.T) {
	r := newReadAhead(100)
	r.acquire(500) // nothing outstanding: a huge line passes
	got := make(chan struct{})
	go func() {
		r.acquire(10)
		close(got)
	}()
	select {
	case <-got:
		t.Fatal("second line read while the first is still outstanding")
	default:
	}
	r.release(500)
	<-got
	r.acquire(90) // 10 + 90 fits
	r.close()
	r.acquire(1000) // closed: never blocks
}
