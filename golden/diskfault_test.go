package golden_test

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/armadra/ama-rpc/golden"
	"github.com/armadra/ama-rpc/store"
)

// Issue 36: disk faults are reported, never silent.

// wireLines decodes every stdout line of r.
func wireLines(t *testing.T, r *golden.Run) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range r.Lines() {
		var v map[string]any
		if err := json.Unmarshal(l, &v); err != nil {
			t.Fatalf("bad line %q", l)
		}
		out = append(out, v)
	}
	return out
}

// announcedIDs returns the ids of the entries announced in entry_appended.
func announcedIDs(lines []map[string]any) []string {
	var ids []string
	for _, v := range lines {
		if v["type"] == "entry_appended" {
			ids = append(ids, v["entry"].(map[string]any)["id"].(string))
		}
	}
	return ids
}

func sessionFileOf(t *testing.T, r *golden.Run, id string) string {
	t.Helper()
	r.Send(`{"id":"` + id + `","type":"get_state"}`)
	idx := r.WaitFor("state", 1, isResponse(id))
	var st struct {
		Data struct{ SessionFile string } `json:"data"`
	}
	if err := json.Unmarshal(r.Lines()[idx], &st); err != nil || st.Data.SessionFile == "" {
		t.Fatalf("no session file in %s", r.Lines()[idx])
	}
	return st.Data.SessionFile
}

// A session file deleted, replaced or truncated by another process while
// the server runs: the next append notices (identity and size), writes
// the file again from memory, and says so with code
// session_file_changed; every entry ever announced is in the file.
func TestSessionFileChangedUnderServer(t *testing.T) {
	for _, tc := range []struct {
		mode string
		idle bool // no prompt after the change: the server puts the file back as it exits
	}{{"deleted", false}, {"replaced", false}, {"truncated", false}, {"appended to", false}, {"truncated", true}} {
		mode := tc.mode
		name := strings.ReplaceAll(mode, " ", "_")
		if tc.idle {
			name += "_while_idle"
		}
		t.Run(name, func(t *testing.T) {
			script := []byte(`[{"text":"r1","usage":{"input":1,"output":1}},{"text":"r2","usage":{"input":1,"output":1}}]`)
			r := golden.Start(t, golden.Config{Args: []string{"--model", "fake/echo"}, Script: script})
			r.Send(`{"id":"p1","type":"prompt","message":"one"}`)
			r.WaitFor("settled 1", 1, isType("agent_settled"))
			file := sessionFileOf(t, r, "st")
			const foreign = `{"type":"session","note":"someone else's"}` + "\n"
			switch mode {
			case "deleted":
				if err := os.Remove(file); err != nil {
					t.Fatal(err)
				}
			case "replaced":
				tmp := file + ".other"
				if err := os.WriteFile(tmp, []byte(foreign), 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(tmp, file); err != nil {
					t.Fatal(err)
				}
			case "truncated":
				st, _ := os.Stat(file)
				if err := os.Truncate(file, st.Size()/2); err != nil {
					t.Fatal(err)
				}
			case "appended to":
				f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
				if err != nil {
					t.Fatal(err)
				}
				_, _ = f.WriteString(`{"type":"custom","customType":"x","id":"intruder","parentId":null,"timestamp":"t"}` + "\n")
				f.Close()
			}
			if !tc.idle {
				r.Send(`{"id":"p2","type":"prompt","message":"two"}`)
				r.WaitFor("settled 2", 2, isType("agent_settled"))
			}
			r.CloseStdin()
			if code := r.Wait(); code != 0 {
				t.Fatalf("exit code %d", code)
			}
			lines := wireLines(t, r)
			if tc.idle {
				if !strings.Contains(r.Stderr(), "rewritten from memory") {
					t.Errorf("the rewrite at exit was not logged:\n%s", r.Stderr())
				}
			}
			said := 0
			for _, v := range lines {
				if v["type"] == "notification" && v["code"] == "session_file_changed" {
					said++
					if msg, _ := v["message"].(string); !strings.Contains(msg, file) || !strings.Contains(msg, mode) {
						t.Errorf("notification does not name the file and what happened: %v", v)
					}
				}
			}
			if said != 1 && !tc.idle { // at exit the wire may already be closed: the log says it
				t.Errorf("%d session_file_changed notifications, want 1", said)
			}
			snap, err := store.ReadSnapshot(file)
			if err != nil {
				t.Fatalf("the session file does not read after the fault: %v", err)
			}
			have := map[string]bool{}
			for _, e := range snap.Entries {
				have[e.ID] = true
			}
			ids := announcedIDs(lines)
			if len(ids) < 7 {
				t.Fatalf("only %d entries announced", len(ids))
			}
			for _, id := range ids {
				if !have[id] {
					t.Errorf("announced entry %s is not in the session file", id)
				}
			}
			if mode == "replaced" {
				aside, _ := filepath.Glob(file + ".replaced-*")
				if len(aside) != 1 {
					t.Fatalf("the foreign file was not kept aside: %v", aside)
				}
				if b, _ := os.ReadFile(aside[0]); string(b) != foreign {
					t.Errorf("kept-aside file holds %q", b)
				}
			}
		})
	}
}

// A full disk: the notification names the session file (not a temporary
// file) and carries code session_write_failed; a fork that cannot write
// its file answers with that code.
func TestFullDiskCodes(t *testing.T) {
	var fault atomic.Pointer[error]
	script := []byte(`[{"text":"r1","usage":{"input":1,"output":1}},{"text":"r2","usage":{"input":1,"output":1}}]`)
	r := golden.Start(t, golden.Config{Args: []string{"--model", "fake/echo"}, Script: script,
		WriteFault: func() error {
			if e := fault.Load(); e != nil {
				return *e
			}
			return nil
		}})
	r.Send(`{"id":"p1","type":"prompt","message":"one"}`)
	r.WaitFor("settled 1", 1, isType("agent_settled"))
	file := sessionFileOf(t, r, "st")
	full := error(&fs.PathError{Op: "write", Path: file + ".1234.abcdef.tmp", Err: syscall.ENOSPC})
	fault.Store(&full)
	r.Send(`{"id":"fm","type":"get_fork_messages"}`)
	idx := r.WaitFor("fork messages", 1, isResponse("fm"))
	var fm struct {
		Data struct {
			Messages []struct{ EntryID string } `json:"messages"`
		} `json:"data"`
	}
	if err := json.Unmarshal(r.Lines()[idx], &fm); err != nil || len(fm.Data.Messages) == 0 {
		t.Fatalf("fork messages: %s", r.Lines()[idx])
	}
	r.Send(`{"id":"fk","type":"fork","entryId":"` + fm.Data.Messages[0].EntryID + `"}`)
	idx = r.WaitFor("fork", 1, isResponse("fk"))
	var resp map[string]any
	_ = json.Unmarshal(r.Lines()[idx], &resp)
	if resp["success"] != false || resp["code"] != "session_write_failed" {
		t.Errorf("fork on a full disk answered %s, want code session_write_failed", r.Lines()[idx])
	}
	r.Send(`{"id":"p2","type":"prompt","message":"two"}`)
	r.WaitFor("settled 2", 2, isType("agent_settled"))
	fault.Store(nil)
	r.CloseStdin()
	if code := r.Wait(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	found := false
	for _, v := range wireLines(t, r) {
		if v["type"] != "notification" || v["code"] != "session_write_failed" {
			continue
		}
		found = true
		if msg, _ := v["message"].(string); !strings.Contains(msg, file+" ") || !strings.Contains(msg, "no space left on device") {
			t.Errorf("notification does not name the session file: %v", v)
		}
	}
	if !found {
		t.Error("no session_write_failed notification")
	}
}
