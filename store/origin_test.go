package store

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/armadra/ama-rpc/llm"
)

// TestLearnOrigin pins what learnOrigin reads (or declines to read) and,
// for every body it reads, that the decoded message agrees.
func TestLearnOrigin(t *testing.T) {
	const known, joins, host = factOrigin, factOrigin | factJoins, factOrigin | factHost
	for _, c := range []struct {
		body string
		want facts
	}{
		{`{"message":{"role":"user","content":"hi","timestamp":1}}`, known},
		{`{"message":{"role":"user","content":"hi","timestamp":1,"origin":"steer"}}`, joins},
		{`{"message":{"role":"user","content":"hi","timestamp":1,"origin":"followUp"}}`, joins},
		{`{"message":{"role":"user","content":"hi","timestamp":1,"origin":"host"}}`, host},
		{`{"message":{"role":"user","content":"hi","timestamp":1,"origin":"plan"}}`, known},
		{`{"message":{"role":"user","origin":"steer","content":"x","timestamp":1}}`, joins},
		{`{"message":{"role":"user","Origin":"steer","content":"x"}}`, joins},                 // encoding/json folds case
		{`{"message":{"role":"user","origin":"steer","origin":"host"}}`, host},                // the last wins
		{`{"message":{"role":"user","content":"\"origin\":\"steer\"","timestamp":1}}`, known}, // inside a string
		{`{"message":{"role":"user","content":[{"type":"text","text":"a\\\"},\"origin\":\"steer"},{"type":"image","data":"x","mimeType":"image/png"}],"timestamp":1}}`, known},
		{`{"message":{"role":"user","content":{"origin":"steer"},"timestamp":1}}`, known},
		{`{"message":{"role":"user" , "content" : "x" , "origin" : "steer" }}`, joins},
		{`{"message":{"role":"user","content":"x","timestamp":1e3,"n":null,"b":true,"origin":"host"}}`, host},
		{`{"message":{"role":"user"}}`, known},
		{`{"message":{"role":"user","origin":null}}`, 0},                  // null keeps an earlier value
		{`{"message":{"role":"user","origin":"st\u0065er"}}`, 0},          // escaped value
		{`{"message":{"role":"user","orig\u0069n":"steer"}}`, 0},          // escaped key
		{`{"message":{"role":"user","role":"assistant"}}`, 0},             // a second role
		{`{"message":{"role":"user","content":"x"},"origin":"steer"}`, 0}, // a member after the message
		{`{"message":{"role":"user","content":"x"},"other":{"origin":"steer"}}`, 0},
		{`{"message":{"role":"user","origin":7}}`, 0},
	} {
		got := learnOrigin([]byte(c.body))
		if got != c.want {
			t.Errorf("%s: facts %b, want %b", c.body, got, c.want)
		}
		checkOrigin(t, []byte(c.body), got)
		e := RawEntry(TypeMessage, json.RawMessage(c.body))
		if e.facts&factUser == 0 || e.facts&(factOrigin|factJoins|factHost) != c.want {
			t.Errorf("%s: entry facts %b", c.body, e.facts)
		}
	}
}

// checkOrigin fails when facts read from body disagree with its decoded
// message.
func checkOrigin(t *testing.T, body []byte, f facts) {
	t.Helper()
	if f&factOrigin == 0 {
		return
	}
	var e Entry
	e.Type = TypeMessage
	e.setBody(body)
	m, err := e.Message()
	if err != nil {
		return // a body that does not decode is the caller's to find
	}
	u, ok := m.(*llm.UserMessage)
	if !ok {
		t.Fatalf("%s: read an origin of a %T", body, m)
	}
	if joins := f&factJoins != 0; joins != u.Origin.JoinsRun() {
		t.Errorf("%s: joins %v, decoded origin %q", body, joins, u.Origin)
	}
	if isHost := f&factHost != 0; isHost != (u.Origin == llm.OriginHost) {
		t.Errorf("%s: host %v, decoded origin %q", body, isHost, u.Origin)
	}
}

// FuzzLearnOrigin checks that an origin read without decoding is the one
// the decoder finds, for any valid body with the user prefix.
func FuzzLearnOrigin(f *testing.F) {
	for _, s := range []string{
		`"content":"hi","timestamp":1,"origin":"steer"`,
		`"origin":"host","content":[{"type":"text","text":"x"}]`,
		`"content":"a\\\"b","ORIGIN":"followUp"`,
		`"x":{"origin":"steer"},"origin":"plan"`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, members string) {
		body := []byte(`{"message":{"role":"user",` + members + `}}`)
		if !json.Valid(body) {
			return
		}
		checkOrigin(t, body, learnOrigin(body))
	})
}

// TestCheckedBodies: a body read from a line is not scanned again when it
// is written (a fork), and one handed in raw still is.
func TestCheckedBodies(t *testing.T) {
	var e Entry
	if err := json.Unmarshal([]byte(`{"type":"custom","customType":"x","data":{"a":1},"id":"a","parentId":null,"timestamp":"t"}`), &e); err != nil {
		t.Fatal(err)
	}
	if e.facts&factChecked == 0 || e.WithParent(nil).facts&factChecked == 0 {
		t.Errorf("a parsed entry is not marked checked: %b", e.facts)
	}
	raw := RawEntry(TypeCustom, json.RawMessage(`{"id":"b"}`))
	raw.ID = "b"
	if raw.facts&factChecked != 0 {
		t.Fatal("a raw body is marked checked")
	}
	if _, err := Create(t.TempDir()+"/s.jsonl", NewHeader("s", time.Unix(0, 0), "/", "v"), []*Entry{&e, raw}); !errors.Is(err, ErrMalformedEntry) {
		t.Errorf("Create with a reserved key in a raw body: %v", err)
	}
}
