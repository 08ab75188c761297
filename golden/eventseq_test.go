package golden_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/golden"
)

// seqScript makes each prompt two model calls full of lines: thinking,
// text in 3-character deltas and a read tool call, then a chunked reply.
func seqScript(prompts int) []byte {
	var rs []string
	for i := 0; i < prompts; i++ {
		rs = append(rs,
			fmt.Sprintf(`{"steps":[{"thinking":"thinking about prompt %d","chunkSize":5},{"text":"Reading the file for prompt number %d now.","chunkSize":3},{"toolCall":{"name":"read","arguments":{"path":"README.md"},"id":"call_%d"}}]}`, i, i, i),
			fmt.Sprintf(`{"steps":[{"text":"Prompt %d is done: the file says hello, and that is all it says.","chunkSize":3}]}`, i))
	}
	return []byte(`{"responses":[` + strings.Join(rs, ",") + `]}`)
}

// seqHost is a host that reads the numbered stream, loses lines and
// recovers them with replay: it keeps the lines in order of seq, ignores
// what it already has, and on a gap asks replay{sinceSeq: last it has}
// and ignores numbered lines until the answer (which is followed by
// exactly the lines it lacks, then live ones).
type seqHost struct {
	t        *testing.T
	run      *golden.Run
	next     uint64   // the seq the host needs next
	got      []string // the lines it applied, by seq
	waiting  string   // id of the replay it waits for ("": none)
	replays  int
	replayTo uint64 // toSeq of the last replay answer
	incoming int    // replayed lines still to come after the last answer
}

// strip returns the line without its seq and the seq (0: none).
func stripSeq(t *testing.T, line []byte) (map[string]any, uint64) {
	var o map[string]any
	if err := json.Unmarshal(line, &o); err != nil {
		t.Fatalf("line is not JSON: %q", line)
	}
	v, ok := o["seq"]
	if !ok {
		return o, 0
	}
	delete(o, "seq")
	n, isNum := v.(float64)
	if !isNum || n < 1 {
		t.Fatalf("seq %v is not a positive number: %s", v, line)
	}
	return o, uint64(n)
}

func (h *seqHost) apply(o map[string]any, seq uint64, line []byte) {
	if h.waiting != "" || seq < h.next {
		return // during a replay, or a line it has: the replay carries it
	}
	if seq > h.next {
		h.replays++
		h.waiting = "replay-" + strconv.Itoa(h.replays)
		h.run.Send(fmt.Sprintf(`{"id":%q,"type":"replay","sinceSeq":%d}`, h.waiting, h.next-1))
		return
	}
	b, _ := json.Marshal(o)
	h.got = append(h.got, string(b))
	h.next++
}

// answered handles a response to the host's replay.
func (h *seqHost) answered(o map[string]any) {
	if o["success"] != true {
		h.t.Fatalf("replay failed: %v", o)
	}
	d := o["data"].(map[string]any)
	if from := uint64(d["fromSeq"].(float64)); from != h.next {
		h.t.Fatalf("replay from %d, the host asked from %d", from, h.next)
	}
	h.replayTo = uint64(d["toSeq"].(float64))
	h.incoming = int(h.replayTo + 1 - h.next)
	h.waiting = ""
}

// TestReplayPropertyDroppedRanges: a host that drops random ranges of
// numbered lines and replays ends with the same transcript as one that
// dropped nothing (every numbered line once, in seq order, no gap).
func TestReplayPropertyDroppedRanges(t *testing.T) {
	seeds := 4
	if s := os.Getenv("AMA_REPLAY_SEEDS"); s != "" {
		seeds, _ = strconv.Atoi(s)
	}
	for k := 0; k < seeds; k++ {
		seed := uint64(k*7919 + 1)
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) { replayProperty(t, seed) })
	}
}

func replayProperty(t *testing.T, seed uint64) {
	const prompts = 4
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	r := golden.Start(t, golden.Config{
		Args:   []string{"--model", "fake/echo", "--permission-mode", "full-auto"},
		Script: seqScript(prompts),
		Files:  map[string]string{"README.md": "hello\n"},
	})
	r.Send(`{"id":"cap","type":"set_client_capabilities","capabilities":["event_seq"]}`)
	h := &seqHost{t: t, run: r}
	ref := map[uint64]string{} // the host that dropped nothing: every seq's first line
	var refOrder []uint64
	dropLeft := 0
	settled, sent := 0, 0
	finalID := ""
	for i := 0; ; i++ {
		line, ok := r.Line(i)
		if !ok {
			last := uint64(0)
			if len(refOrder) > 0 {
				last = refOrder[len(refOrder)-1]
			}
			t.Fatalf("output ended at line %d (seed %d): host next %d, stream last %d, waiting %q, final %q, settled %d, replayTo %d; stderr:\n%s",
				i, seed, h.next, last, h.waiting, finalID, settled, h.replayTo, r.Stderr())
		}
		o, seq := stripSeq(t, line)
		switch {
		case o["type"] == "response" && o["id"] == "cap":
			if o["success"] != true {
				t.Fatalf("set_client_capabilities: %s", line)
			}
			h.next = uint64(o["data"].(map[string]any)["seqBase"].(float64)) + 1
			r.Send(`{"id":"p0","type":"prompt","message":"go 0"}`)
			sent++
		case o["type"] == "response" && o["id"] == h.waiting:
			h.answered(o)
		case o["type"] == "response":
			if o["success"] != true {
				t.Fatalf("command failed: %s", line)
			}
		}
		if seq != 0 {
			if h.waiting == "" && h.incoming > 0 {
				h.incoming-- // the replayed lines follow their answer as one run
			}
			_, seen := ref[seq]
			if !seen {
				if len(refOrder) > 0 && seq != refOrder[len(refOrder)-1]+1 {
					t.Fatalf("new seq %d after %d: numbers must be given without gaps, in write order", seq, refOrder[len(refOrder)-1])
				}
				b, _ := json.Marshal(o)
				ref[seq] = string(b)
				refOrder = append(refOrder, seq)
			} else if b, _ := json.Marshal(o); string(b) != ref[seq] {
				t.Fatalf("seq %d replayed as %s, first written as %s", seq, b, ref[seq])
			}
			if o["type"] == "agent_settled" && !seen {
				settled++
				if sent < prompts {
					r.Send(fmt.Sprintf(`{"id":"p%d","type":"prompt","message":"go %d"}`, sent, sent))
					sent++
				}
			}
			// The host's reader loses ranges of 1-40 lines now and then.
			if dropLeft == 0 && rng.IntN(12) == 0 {
				dropLeft = 1 + rng.IntN(40)
			}
			if dropLeft > 0 {
				dropLeft--
			} else {
				h.apply(o, seq, line)
			}
		} else if o["type"] != "response" && h.next != 0 {
			t.Fatalf("event line without seq after event_seq: %s", line)
		}
		if settled == prompts && h.waiting == "" && h.incoming == 0 && (finalID == "" || h.next-1 < h.replayTo) {
			// A lost tail shows no gap: the host asks again until it has
			// everything the last answer announced (toSeq).
			h.replays++
			finalID = "replay-" + strconv.Itoa(h.replays)
			h.waiting = finalID
			r.Send(fmt.Sprintf(`{"id":%q,"type":"replay","sinceSeq":%d}`, finalID, h.next-1))
		}
		if finalID != "" && h.waiting == "" && h.next-1 >= h.replayTo && h.next-1 == refOrder[len(refOrder)-1] {
			break
		}
	}
	if len(h.got) != len(refOrder) {
		t.Fatalf("host has %d lines, the stream %d (replays %d)", len(h.got), len(refOrder), h.replays)
	}
	for i, s := range refOrder {
		if h.got[i] != ref[s] {
			t.Fatalf("line %d (seq %d): host %s, stream %s", i, s, h.got[i], ref[s])
		}
	}
	if h.replays < 2 {
		t.Logf("seed %d: only %d replays", seed, h.replays)
	}
	t.Logf("seed %d: %d numbered lines, %d replays", seed, len(refOrder), h.replays)
}

// seqRun collects a run's lines as maps, by index.
type seqRun struct {
	t *testing.T
	r *golden.Run
	i int
}

// until reads lines until pred matches one and returns it.
func (s *seqRun) until(desc string, pred func(map[string]any) bool) map[string]any {
	s.t.Helper()
	for ; ; s.i++ {
		line, ok := s.r.Line(s.i)
		if !ok {
			s.t.Fatalf("waiting for %s: output ended; stderr:\n%s", desc, s.r.Stderr())
		}
		var o map[string]any
		if err := json.Unmarshal(line, &o); err != nil {
			s.t.Fatalf("not JSON: %q", line)
		}
		if pred(o) {
			s.i++
			return o
		}
	}
}

func (s *seqRun) response(id string) map[string]any {
	return s.until("response "+id, func(o map[string]any) bool { return o["type"] == "response" && o["id"] == id })
}

func seqOf(o map[string]any) uint64 {
	n, _ := o["seq"].(float64)
	return uint64(n)
}

// TestReplayCursorExpiredAndResume: a cursor older than the ring, or
// newer than the stream, answers the typed cursor_expired and nothing
// else; a resumed session's numbers continue above every number the
// earlier process could have given, and that process's cursors are
// expired.
func TestReplayCursorExpiredAndResume(t *testing.T) {
	cfg := golden.Config{
		Args:       []string{"--model", "fake/echo"},
		UserConfig: []byte(`{"replay":{"ringLines":8}}`),
	}
	r1 := golden.Start(t, cfg)
	s1 := &seqRun{t: t, r: r1}
	r1.Send(`{"id":"cap","type":"set_client_capabilities","capabilities":["event_seq"]}`)
	base1 := uint64(s1.response("cap")["data"].(map[string]any)["seqBase"].(float64))
	r1.Send(`{"id":"p","type":"prompt","message":"hello there"}`)
	last1 := seqOf(s1.until("agent_settled", func(o map[string]any) bool { return o["type"] == "agent_settled" }))
	if last1 <= base1+8 {
		t.Fatalf("a prompt wrote only %d numbered lines; the test needs more than the ring", last1-base1)
	}
	for _, tc := range []struct {
		id      string
		since   uint64
		expired bool
	}{
		{"old", base1, true},           // evicted by the ring of 8
		{"future", last1 + 1000, true}, // never given by this stream
		{"recent", last1 - 3, false},
	} {
		r1.Send(fmt.Sprintf(`{"id":%q,"type":"replay","sinceSeq":%d}`, tc.id, tc.since))
		o := s1.response(tc.id)
		if tc.expired {
			if o["success"] != false || o["code"] != "cursor_expired" {
				t.Fatalf("%s: %v, want code cursor_expired", tc.id, o)
			}
			continue
		}
		d := o["data"].(map[string]any)
		if o["success"] != true || uint64(d["fromSeq"].(float64)) != tc.since+1 || d["status"] != "idle" {
			t.Fatalf("%s: %v", tc.id, o)
		}
		if st := d["state"].(map[string]any); st["sessionId"] == nil {
			t.Fatalf("snapshot without the session state: %v", d)
		}
		to := uint64(d["toSeq"].(float64))
		for want := tc.since + 1; want <= to; want++ {
			line, ok := r1.Line(s1.i)
			if !ok {
				t.Fatal("replay ended early")
			}
			s1.i++
			var l map[string]any
			_ = json.Unmarshal(line, &l)
			if seqOf(l) != want {
				t.Fatalf("replayed line %s, want seq %d", line, want)
			}
		}
	}
	r1.Send(fmt.Sprintf(`{"id":"other","type":"replay","sinceSeq":%d,"sessionId":"not-this-one"}`, last1-1))
	if o := s1.response("other"); o["code"] != "cursor_expired" {
		t.Fatalf("another session's cursor: %v, want cursor_expired", o)
	}
	r1.Send(`{"id":"bad","type":"replay","sinceSeq":-1}`)
	if o := s1.response("bad"); o["code"] != "invalid_arguments" {
		t.Fatalf("negative cursor: %v", o)
	}
	r1.Send(`{"id":"gs","type":"get_state"}`)
	path := s1.response("gs")["data"].(map[string]any)["sessionFile"].(string)
	r1.CloseStdin()
	if code := r1.Wait(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"customType":"ama-rpc.seq"`) {
		t.Fatalf("no seq reservation in the session file:\n%s", data)
	}

	// A new process resumes the session.
	r2 := golden.Start(t, golden.Config{
		Args:        []string{"--model", "fake/echo", "--session", "<session>"},
		SessionFile: []byte(strings.ReplaceAll(string(data), r1.Work, "<work>")),
	})
	s2 := &seqRun{t: t, r: r2}
	r2.Send(`{"id":"cap","type":"set_client_capabilities","capabilities":["event_seq"]}`)
	base2 := uint64(s2.response("cap")["data"].(map[string]any)["seqBase"].(float64))
	if base2 < last1 {
		t.Fatalf("resumed stream starts at %d, below the earlier process's %d", base2+1, last1)
	}
	r2.Send(`{"id":"p","type":"prompt","message":"again"}`)
	first2 := seqOf(s2.until("a numbered line", func(o map[string]any) bool { return seqOf(o) != 0 }))
	if first2 != base2+1 || first2 <= last1 {
		t.Fatalf("first number after resume %d (base %d, earlier last %d)", first2, base2, last1)
	}
	s2.until("agent_settled", func(o map[string]any) bool { return o["type"] == "agent_settled" })
	r2.Send(fmt.Sprintf(`{"id":"old","type":"replay","sinceSeq":%d}`, last1))
	if o := s2.response("old"); o["code"] != "cursor_expired" {
		t.Fatalf("a cursor of the earlier process: %v, want cursor_expired", o)
	}
}

// Without event_seq, replay is refused and no line carries a seq.
func TestReplayNeedsCapability(t *testing.T) {
	r := golden.Start(t, golden.Config{Args: []string{"--model", "fake/echo"}})
	s := &seqRun{t: t, r: r}
	r.Send(`{"id":"p","type":"prompt","message":"hi"}`)
	s.until("agent_settled", func(o map[string]any) bool { return o["type"] == "agent_settled" })
	r.Send(`{"id":"r","type":"replay","sinceSeq":0}`)
	if o := s.response("r"); o["code"] != "invalid_arguments" {
		t.Fatalf("replay without the capability: %v", o)
	}
	for _, l := range r.Lines() {
		if strings.Contains(string(l), `"seq":`) {
			t.Fatalf("a line carries seq without the capability: %s", l)
		}
	}
}

// The snapshot reports a run waiting for a permission_response as
// waiting_approval with the request's id, then running once answered.
func TestReplaySnapshotWaitingApproval(t *testing.T) {
	r := golden.Start(t, golden.Config{
		Args:   []string{"--model", "fake/echo", "--permission-mode", "default"},
		Script: []byte(`[{"steps":[{"toolCall":{"name":"write","arguments":{"path":"a.txt","content":"x"},"id":"call_1"}}]},{"text":"done"}]`),
	})
	s := &seqRun{t: t, r: r}
	r.Send(`{"id":"cap","type":"set_client_capabilities","capabilities":["approvals","event_seq"]}`)
	base := uint64(s.response("cap")["data"].(map[string]any)["seqBase"].(float64))
	r.Send(`{"id":"p","type":"prompt","message":"write it"}`)
	req := s.until("permission_request", func(o map[string]any) bool { return o["type"] == "permission_request" })
	r.Send(fmt.Sprintf(`{"id":"r1","type":"replay","sinceSeq":%d}`, base))
	d := s.response("r1")["data"].(map[string]any)
	pending, _ := d["pendingRequests"].([]any)
	if d["status"] != "waiting_approval" || len(pending) != 1 || pending[0] != req["requestId"] {
		t.Fatalf("snapshot while asking: %v (request %v)", d, req["requestId"])
	}
	if uint64(d["toSeq"].(float64)) < seqOf(req) {
		t.Fatalf("the replayed range %v..%v misses the permission_request %d", d["fromSeq"], d["toSeq"], seqOf(req))
	}
	r.Send(fmt.Sprintf(`{"id":"a","type":"permission_response","requestId":%q,"decision":"deny"}`, req["requestId"]))
	s.until("agent_settled", func(o map[string]any) bool { return o["type"] == "agent_settled" })
	r.Send(fmt.Sprintf(`{"id":"r2","type":"replay","sinceSeq":%d}`, base))
	if d := s.response("r2")["data"].(map[string]any); d["status"] != "idle" || len(d["pendingRequests"].([]any)) != 0 {
		t.Fatalf("snapshot after the run: %v", d)
	}
}
