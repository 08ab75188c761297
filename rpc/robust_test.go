package rpc

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/internal/stdio"
	"github.com/armadra/ama-rpc/rpc/internal/wirecode"
	"github.com/armadra/ama-rpc/store"
)

// A result that encoding/json refuses (here NaN) is answered with an
// encode_failed error response instead of vanishing.
func TestUnencodableResultIsAnswered(t *testing.T) {
	var out bytes.Buffer
	s := &Server{log: zap.NewNop(), w: stdio.NewWriter(&out, stdio.WriterOptions{})}
	id := "x"
	s.ok(&command{id: &id, name: "get_state"}, map[string]float64{"v": math.NaN()})
	s.w.Close()
	var r Response
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("no response line: %q", out.String())
	}
	if r.Success || r.Code != wirecode.EncodeFailed || r.ID == nil || *r.ID != "x" || r.Command != "get_state" {
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
	generic, _ := stdio.Marshal(Response{ID: &id, Type: "response", Command: "get_tree", Success: true, Data: json.RawMessage(`[]`)})
	mine, _ := encodeOK(&id, "get_tree", rawJSON(`[]`))
	if !bytes.Equal(generic, mine) {
		t.Fatalf("envelope %q, generic %q", mine, generic)
	}
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
	slow, err := stdio.MarshalAfter(prefix, events.EntryAppended{Entry: e})
	if err != nil {
		t.Fatal(err)
	}
	slow[len(prefix)] = ','
	if !bytes.Equal(stdio.ValidUTF8(fast), stdio.ValidUTF8(slow)) {
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
