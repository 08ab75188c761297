package golden_test

import (
	"encoding/json"
	"io/fs"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/armadra/ama-rpc/golden"
	"github.com/armadra/ama-rpc/store"
)

// Writes that fail (a full disk) lose nothing: the host is told once, the
// entries stay in memory, and the next successful write (or the close)
// puts every one of them into the file in order.
func TestDiskErrorsKeepEntries(t *testing.T) {
	var fault atomic.Pointer[error]
	script := []byte(`[{"text":"r1","usage":{"input":1,"output":1}},{"text":"r2","usage":{"input":1,"output":1}},
		{"text":"r3","usage":{"input":1,"output":1}}]`)
	r := golden.Start(t, golden.Config{Args: []string{"--model", "fake/echo"}, Script: script,
		WriteFault: func() error {
			if e := fault.Load(); e != nil {
				return *e
			}
			return nil
		}})
	r.Send(`{"id":"p1","type":"prompt","message":"one"}`)
	r.WaitFor("settled 1", 1, isType("agent_settled"))
	full := error(&fs.PathError{Op: "write", Path: "session", Err: syscall.ENOSPC})
	fault.Store(&full)
	r.Send(`{"id":"p2","type":"prompt","message":"two"}`)
	r.WaitFor("settled 2", 2, isType("agent_settled"))
	// Rewinding before "two" writes a leaf line; it must land after the
	// entries still waiting, or reopening would pick the wrong branch.
	r.Send(`{"id":"pts","type":"get_rewind_points"}`)
	idx := r.WaitFor("points", 1, isResponse("pts"))
	var pts struct {
		Data struct{ Points []struct{ EntryID string } } `json:"data"`
	}
	if err := json.Unmarshal(r.Lines()[idx], &pts); err != nil || len(pts.Data.Points) != 2 {
		t.Fatalf("rewind points: %s", r.Lines()[idx])
	}
	r.Send(`{"id":"rw","type":"rewind","mode":"conversation","entryId":"` + pts.Data.Points[1].EntryID + `"}`)
	r.WaitFor("rewound", 1, isResponse("rw"))
	fault.Store(nil)
	r.Send(`{"id":"p3","type":"prompt","message":"three"}`)
	r.WaitFor("settled 3", 3, isType("agent_settled"))
	r.Send(`{"id":"st","type":"get_state"}`)
	idx = r.WaitFor("state", 1, isResponse("st"))
	line := r.Lines()[idx]

	var st struct {
		Data struct{ SessionFile string } `json:"data"`
	}
	if err := json.Unmarshal(line, &st); err != nil || st.Data.SessionFile == "" {
		t.Fatalf("no session file in %s", line)
	}
	// A rewind while the disk is full, then the disk recovers and the host
	// quits: the leaf line is written on close, so the file reopens at the
	// rewound point.
	r.Send(`{"id":"pts2","type":"get_rewind_points"}`)
	idx = r.WaitFor("points", 1, isResponse("pts2"))
	if err := json.Unmarshal(r.Lines()[idx], &pts); err != nil || len(pts.Data.Points) != 2 {
		t.Fatalf("rewind points: %s", r.Lines()[idx])
	}
	fault.Store(&full)
	r.Send(`{"id":"rw2","type":"rewind","mode":"conversation","entryId":"` + pts.Data.Points[1].EntryID + `"}`)
	r.WaitFor("rewound", 1, isResponse("rw2"))
	fault.Store(nil)
	r.CloseStdin()
	if code := r.Wait(); code != 0 {
		t.Fatalf("exit code %d", code)
	}

	var reported []string
	warnings := 0
	for _, l := range r.Lines() {
		var v struct {
			Type    string
			Level   string
			Message string
			Entry   struct{ ID string }
		}
		_ = json.Unmarshal(l, &v)
		switch {
		case v.Type == "entry_appended":
			reported = append(reported, v.Entry.ID)
		case v.Type == "notification" && v.Level == "error" && strings.Contains(v.Message, "no space left"):
			warnings++
		}
	}
	if warnings != 2 {
		t.Errorf("%d disk warnings, want one per failure episode (2)", warnings)
	}
	snap, inFile := readEntryIDs(t, st.Data.SessionFile)
	if strings.Join(inFile, ",") != strings.Join(reported, ",") {
		t.Fatalf("file entries differ from reported ones\nfile:     %v\nreported: %v", inFile, reported)
	}
	var texts []string
	for _, e := range snap.Tree().Branch() {
		var m struct {
			Message struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if e.Type == "message" && json.Unmarshal(e.AppendJSON(nil), &m) == nil && m.Message.Role != "system" {
			texts = append(texts, m.Message.Role+":"+string(m.Message.Content))
		}
	}
	want := `user:"one",assistant:[{"type":"text","text":"r1"}]`
	if got := strings.Join(texts, ","); got != want {
		t.Errorf("active branch after reopen\ngot:  %s\nwant: %s", got, want)
	}
	var all []string
	for _, e := range snap.Entries {
		var m struct {
			Message struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if e.Type == "message" && json.Unmarshal(e.AppendJSON(nil), &m) == nil {
			all = append(all, string(m.Message.Content))
		}
	}
	if got := strings.Join(all, ","); !strings.Contains(got, `"two"`) || !strings.Contains(got, `"three"`) {
		t.Errorf("abandoned branches lost: %s", got)
	}
}

// readEntryIDs reads a session file and the ids of its entries in file
// order.
func readEntryIDs(t *testing.T, file string) (*store.Snapshot, []string) {
	t.Helper()
	snap, err := store.ReadSnapshot(file)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range snap.Entries {
		ids = append(ids, e.ID)
	}
	return snap, ids
}
