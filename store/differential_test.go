package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/armadra/ama-rpc/llm"
)

// The differential guard of the hand-written reader (issue 36): sessions
// of generated entries — every entry type, every content block kind,
// sizes from 0 bytes to past every buffer of the reader (the builder's
// arena chunks, the string arena, the line reader's buffer, the spill and
// direct-write thresholds) with escapes and multi-byte UTF-8 placed on
// every kind of boundary — are written through the real store (Create,
// Append, AppendLeaf) and read back by ReadSnapshot (one pass and in two
// halves) and Open; every entry must be what encoding/json reads from its
// line, and what was written.

// diffCases is the number of generated sessions of the bounded run in
// make test; AMA_DIFF_CASES raises it (make fuzz runs the fuzz target).
func diffCases(t *testing.T) int {
	if v, err := strconv.Atoi(os.Getenv("AMA_DIFF_CASES")); err == nil && v > 0 {
		return v
	}
	if testing.Short() || raceOn { // -race costs ~10x on the multi-MiB cases
		return 4
	}
	return 24
}

func TestDifferentialSessions(t *testing.T) {
	n := diffCases(t)
	for i := range n {
		checkGenerated(t, uint64(i)*0x9e3779b97f4a7c15+1)
	}
}

// FuzzDifferentialSessions runs the same property from fuzzed seeds.
func FuzzDifferentialSessions(f *testing.F) {
	for _, s := range []uint64{1, 2, 3, 41026, 1 << 20} {
		f.Add(s)
	}
	// Lighter cases: an input that runs over 10 s counts as a hang.
	bigOdds, maxBatches = 40, 4
	f.Fuzz(func(t *testing.T, seed uint64) { checkGenerated(t, seed) })
}

// Sizes around every buffer boundary of the reader and writer.
var diffSizes = []int{
	0, 1, 7, 8, 9, 15, 16, 17, 100,
	16 << 10, 32 << 10, 41026, 48 << 10, 64 << 10,
	arenaChunk / 8, strChunk / 8, strChunk, 300 << 10,
}

// bigSizes are drawn rarely, one size in bigOdds (they cost time under
// -race); a session has up to maxBatches appends.
var bigOdds, maxBatches = 12, 8

// bigSizes are the sizes past the big buffers.
var bigSizes = []int{arenaChunk, readChunk, SpillBytes, directBody, 2 << 20}

func genSize(r *rand.Rand) int {
	var n int
	if r.IntN(bigOdds) == 0 {
		n = bigSizes[r.IntN(len(bigSizes))]
	} else {
		n = diffSizes[r.IntN(len(diffSizes))]
	}
	if n > 0 {
		n += r.IntN(17) - 8 // -8..+8 around it: every alignment of a word
	}
	return max(n, 0)
}

// Pieces that stress the string scanner and the escaper: JSON escapes,
// control characters, HTML characters, U+2028/U+2029 (kept raw), 2-, 3-
// and 4-byte runes, and bytes that are not UTF-8 (encoded as U+FFFD).
var diffPieces = []string{
	`"`, `\`, "\n", "\r", "\t", "\x00", "\x01", "\x1f", "\x7f", "<", ">", "&", "\u2028", "\u2029",
	"é", "€", "\U0001F600", "日本", "\xff", "\xe2\x82", "/", "\\u0041", "a",
}

// genText returns about n bytes: mostly plain ASCII runs with pieces at
// random places, so that every piece falls on every kind of boundary
// over many cases. The first and last bytes are pieces often.
func genText(r *rand.Rand, n int) string {
	if n == 0 {
		return ""
	}
	var b strings.Builder
	b.Grow(n + 8)
	for b.Len() < n {
		if r.IntN(4) == 0 {
			b.WriteString(diffPieces[r.IntN(len(diffPieces))])
			continue
		}
		run := min(r.IntN(64)+1, n-b.Len())
		if r.IntN(64) == 0 {
			run = n - b.Len() // a long plain stretch
		}
		for run > 0 {
			k := min(run, len(letters))
			off := r.IntN(len(letters) - k + 1)
			b.WriteString(letters[off : off+k])
			run -= k
		}
	}
	return b.String()
}

// letters is plain text to cut runs from.
var letters = func() string {
	r := rand.New(rand.NewPCG(7, 7))
	b := make([]byte, 64<<10)
	for i := range b {
		b[i] = byte('a' + r.IntN(26))
	}
	return string(b)
}()

func genContent(r *rand.Rand) llm.Content {
	switch r.IntN(4) {
	case 0:
		return llm.Text(genText(r, genSize(r)))
	case 1:
		return &llm.ThinkingContent{Type: "thinking", Thinking: genText(r, genSize(r)), ThinkingSignature: genText(r, r.IntN(20))}
	case 2:
		data := make([]byte, genSize(r)*3/4)
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		return llm.Image(base64Std(data), "image/png")
	default:
		args, _ := json.Marshal(map[string]string{"path": genText(r, r.IntN(40)), "content": genText(r, genSize(r))})
		return llm.NewToolCall("call_"+strconv.Itoa(r.IntN(1000)), "write", args)
	}
}

func genBlocks(r *rand.Rand) []llm.Content {
	out := make([]llm.Content, r.IntN(4))
	for i := range out {
		out[i] = genContent(r)
	}
	return out
}

func genUserContent(r *rand.Rand) llm.UserContent {
	if r.IntN(2) == 0 {
		return llm.StringContent(genText(r, genSize(r)))
	}
	var bs []llm.Content
	for range r.IntN(3) + 1 {
		if r.IntN(3) == 0 {
			bs = append(bs, llm.Image(base64Std([]byte(genText(r, genSize(r)/2))), "image/jpeg"))
		} else {
			bs = append(bs, llm.Text(genText(r, genSize(r))))
		}
	}
	return llm.BlockContent(bs...)
}

// genEntry returns an entry of a random type made by the store's own
// constructors.
func genEntry(r *rand.Rand) *Entry {
	txt := func() string { return genText(r, genSize(r)) }
	usage := &llm.Usage{Input: r.IntN(1000), Output: r.IntN(1000)}
	switch r.IntN(14) {
	case 0, 1:
		return MessageEntry(&llm.UserMessage{Role: llm.RoleUser, Content: genUserContent(r), Timestamp: r.Int64N(1 << 50)})
	case 2, 3:
		return MessageEntry(&llm.AssistantMessage{Role: llm.RoleAssistant, Content: genBlocks(r), API: "fake", Provider: "fake",
			Model: genText(r, 8), StopReason: llm.StopStop, Timestamp: 5, ErrorMessage: genText(r, r.IntN(3)*8)})
	case 4, 5:
		return MessageEntry(&llm.ToolResultMessage{Role: llm.RoleToolResult, ToolCallID: genText(r, 12), ToolName: "read",
			Content: genBlocks(r), IsError: r.IntN(2) == 0, Timestamp: 6, Details: jsonOf(map[string]string{"k": genText(r, r.IntN(30))})})
	case 6:
		s := txt()
		return MessageEntry(&llm.SystemMessage{Role: llm.RoleSystem, Sections: llm.Sections{Preamble: &s}, Timestamp: 7})
	case 7:
		return CompactionEntry(txt(), genText(r, 10), r.IntN(1<<20), usage)
	case 8:
		return BranchSummaryEntry(genText(r, 10), txt(), nil)
	case 9:
		s := txt()
		return ContextEditEntry(genText(r, 10), &s, genText(r, 20))
	case 10:
		return CustomEntry(genText(r, r.IntN(20)), map[string]any{"v": txt(), "n": r.IntN(9)})
	case 11:
		return CustomMessageEntry(&llm.CustomMessage{CustomType: genText(r, 9), Content: genUserContent(r), Display: r.IntN(2) == 0})
	case 12:
		switch r.IntN(4) {
		case 0:
			return LabelEntry(genText(r, 10), txt())
		case 1:
			return SessionInfoEntry(txt())
		case 2:
			return ModelChangeEntry(genText(r, 6), genText(r, 12), "")
		default:
			return ThinkingLevelEntry(genText(r, 5))
		}
	default:
		return UsageEntry(genText(r, 6), "fake", genText(r, 8), *usage)
	}
}

func jsonOf(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func base64Std(b []byte) string {
	const enc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	out := make([]byte, 0, (len(b)+2)/3*4)
	for i := 0; i+2 < len(b); i += 3 {
		v := uint(b[i])<<16 | uint(b[i+1])<<8 | uint(b[i+2])
		out = append(out, enc[v>>18&63], enc[v>>12&63], enc[v>>6&63], enc[v&63])
	}
	return string(out)
}

// checkGenerated writes one generated session and checks every reader
// against encoding/json and against what was written.
func checkGenerated(t *testing.T, seed uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, seed^0x5bd1e995))
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	var written []*Entry
	var parent *string
	next := func() *Entry {
		e := genEntry(r)
		// ids and timestamps are valid UTF-8 (the file would hold U+FFFD
		// for a bad byte; ama makes ids itself).
		e.ID = strings.ToValidUTF8(genText(r, r.IntN(3)*6+1), "\uFFFD") + strconv.Itoa(len(written))
		e.ParentID = parent
		e.Timestamp = "2026-10-02T05:23:11.123Z"
		if r.IntN(8) == 0 {
			e.Timestamp = strings.ToValidUTF8(genText(r, 10), "\uFFFD")
		}
		id := e.ID
		parent = &id
		written = append(written, e)
		return e
	}
	var initial []*Entry
	for range r.IntN(3) {
		initial = append(initial, next())
	}
	f, err := Create(path, NewHeader("s-"+strconv.FormatUint(seed, 16), mustParse(t, "2026-10-02T05:23:11.123Z"), "/w\u2028é", "1"), initial)
	if err != nil {
		t.Fatalf("seed %d: create: %v", seed, err)
	}
	for range r.IntN(maxBatches) + 2 {
		var batch []*Entry
		for range r.IntN(3) + 1 {
			batch = append(batch, next())
		}
		if err := f.Append(batch...); err != nil {
			t.Fatalf("seed %d: append: %v", seed, err)
		}
		if r.IntN(5) == 0 && len(written) > 1 {
			id := written[r.IntN(len(written))].ID
			if err := f.AppendLeaf(&id, "t"); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	ref := referenceEntries(t, path)
	if len(ref) != len(written) {
		t.Fatalf("seed %d: encoding/json reads %d entries, %d written", seed, len(ref), len(written))
	}
	for i := range ref {
		sameEntry(t, seed, "written", written[i], ref[i])
	}
	snap, err := ReadSnapshot(path)
	if err != nil {
		t.Fatalf("seed %d: ReadSnapshot: %v", seed, err)
	}
	compareAll(t, seed, "ReadSnapshot", snap, ref)
	if snap.Fallback != nil {
		t.Errorf("seed %d: the fast path fell back: %v", seed, snap.Fallback)
	}
	// In two halves, split at a line boundary near the middle.
	fd, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := fd.Stat()
	if split := lineAfter(fd, st.Size()/2); split > 0 && split < st.Size() {
		s2, _, ok := readSplitAt(fd, path, split)
		if !ok {
			t.Fatalf("seed %d: readSplitAt failed", seed)
		}
		compareAll(t, seed, "readSplitAt", s2, ref)
	}
	fd.Close()
	f2, s3, err := Open(path, OpenOptions{})
	if err != nil {
		t.Fatalf("seed %d: Open: %v", seed, err)
	}
	defer f2.Close()
	compareAll(t, seed, "Open", s3, ref)
	info, err := ReadInfo(path)
	if err != nil {
		t.Fatalf("seed %d: ReadInfo: %v", seed, err)
	}
	if info.Name != s3.Name {
		t.Errorf("seed %d: ReadInfo name %q, snapshot %q", seed, info.Name, s3.Name)
	}
}

// referenceEntries reads the entry lines of the file with encoding/json
// only (bufio for the lines, stdLine for the members).
func referenceEntries(t *testing.T, path string) []*Entry {
	t.Helper()
	fd, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	sc := bufio.NewScanner(fd)
	sc.Buffer(nil, 64<<20)
	var out []*Entry
	first := true
	for sc.Scan() {
		if first {
			first = false
			continue
		}
		e, leaf, _, err := stdLine(sc.Bytes())
		if err != nil {
			t.Fatalf("encoding/json rejects a written line: %v", err)
		}
		if !leaf {
			out = append(out, e)
			// Entry.UnmarshalJSON is the fast path for one line.
			var u Entry
			if err := u.UnmarshalJSON(sc.Bytes()); err != nil {
				t.Fatalf("UnmarshalJSON rejects a written line: %v", err)
			}
			sameEntry(t, 0, "UnmarshalJSON", &u, e)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func compareAll(t *testing.T, seed uint64, who string, snap *Snapshot, ref []*Entry) {
	t.Helper()
	if len(snap.Entries) != len(ref) {
		t.Fatalf("seed %d: %s read %d entries, encoding/json %d", seed, who, len(snap.Entries), len(ref))
	}
	for i := range ref {
		sameEntry(t, seed, who, snap.Entries[i], ref[i])
	}
}

// sameEntry compares the fast reader's entry with encoding/json's: the
// reserved fields, the body byte for byte and as decoded values, the
// learnt facts and the decoded message.
func sameEntry(t *testing.T, seed uint64, who string, got, want *Entry) {
	t.Helper()
	fail := func(what string, g, w any) {
		t.Helper()
		gs, ws := fmt.Sprint(g), fmt.Sprint(w)
		t.Fatalf("seed %d: %s entry %q: %s differs:\n got  %.200q (%d bytes)\n want %.200q (%d bytes)", seed, who, want.ID, what, gs, len(gs), ws, len(ws))
	}
	if got.Type != want.Type {
		fail("type", got.Type, want.Type)
	}
	if got.ID != want.ID {
		fail("id", got.ID, want.ID)
	}
	if (got.ParentID == nil) != (want.ParentID == nil) || (got.ParentID != nil && *got.ParentID != *want.ParentID) {
		fail("parentId", got.ParentID, want.ParentID)
	}
	if got.Timestamp != want.Timestamp {
		fail("timestamp", got.Timestamp, want.Timestamp)
	}
	if !utf8.Valid(got.Body()) {
		fail("body validity", "invalid UTF-8", "")
	}
	if !bytes.Equal(got.Body(), want.Body()) {
		var g, w any
		_ = json.Unmarshal(got.Body(), &g)
		_ = json.Unmarshal(want.Body(), &w)
		if !reflect.DeepEqual(g, w) {
			fail("body", string(got.Body()), string(want.Body()))
		}
	}
	if got.CustomType() != want.CustomType() {
		fail("customType", got.CustomType(), want.CustomType())
	}
	if got.Type == TypeSessionInfo && got.sessionName() != sessionName(want.Body()) {
		fail("name", got.sessionName(), sessionName(want.Body()))
	}
	if got.Type == TypeLabel {
		gt, gl, gok := got.label()
		wt, wl, wok := labelFields(want.Body())
		if gt != wt || gl != wl || gok != wok {
			fail("label", [3]any{gt, gl, gok}, [3]any{wt, wl, wok})
		}
	}
	// The message is decoded once (the other readers' bodies are compared
	// byte for byte; a written entry keeps its message as given, invalid
	// UTF-8 included).
	// Under -race encoding/json is ~10x slower: the messages of huge
	// bodies (already equal byte for byte) are left to the runs without.
	if got.Type == TypeMessage && who == "ReadSnapshot" && (!raceOn || len(got.Body()) < 256<<10) {
		gm, gerr := got.Message()
		var raw struct {
			Message json.RawMessage `json:"message"`
		}
		if err := json.Unmarshal(want.Body(), &raw); err != nil {
			t.Fatal(err)
		}
		wm, werr := llm.DecodeMessage(raw.Message)
		if (gerr == nil) != (werr == nil) {
			fail("message error", gerr, werr)
		}
		gj, _ := json.Marshal(gm)
		wj, _ := json.Marshal(wm)
		if !bytes.Equal(gj, wj) {
			fail("message", string(gj), string(wj))
		}
		if isSystemEntry(got) != (wm != nil && wm.MessageRole() == llm.RoleSystem) {
			fail("system", isSystemEntry(got), wm.MessageRole())
		}
	}
}

// TestFallbackReadsLine: a line the fast path fails on is read by the
// standard decoder, counted once, and the session reads as it would have.
func TestFallbackReadsLine(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	big := strings.Repeat("é\"\\\n", 12<<10) // ~60 KiB, escapes throughout
	var es []*Entry
	var parent *string
	for i, text := range []string{"a", "BREAK " + big, "c", "BREAK again"} {
		e := MessageEntry(llm.NewUser(text, int64(i), ""))
		e.ID, e.ParentID, e.Timestamp = "e"+strconv.Itoa(i), parent, "t"
		id := e.ID
		parent = &id
		es = append(es, e)
	}
	f, err := Create(path, NewHeader("s", mustParse(t, "2026-10-02T05:23:11.123Z"), "/w", "1"), es[:2])
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Append(es[2:]...); err != nil {
		t.Fatal(err)
	}
	f.Close()
	clean, err := ReadSnapshot(path)
	if err != nil {
		t.Fatal(err)
	}
	breakFast = func(line []byte) bool { return bytes.Contains(line, []byte("BREAK")) }
	defer func() { breakFast = nil }()
	for _, read := range []func() (*Snapshot, error){
		func() (*Snapshot, error) { return ReadSnapshot(path) },
		func() (*Snapshot, error) { f, s, err := Open(path, OpenOptions{}); f.Close(); return s, err },
	} {
		snap, err := read()
		if err != nil {
			t.Fatalf("a fast-path failure made the session unreadable: %v", err)
		}
		if snap.Fallback == nil || snap.Fallback.Count != 2 || snap.Fallback.Line != 3 {
			t.Fatalf("fallback %+v, want 2 lines from line 3", snap.Fallback)
		}
		compareAll(t, 0, "ReadSnapshot", snap, clean.Entries)
	}
	info, err := ReadInfo(path)
	if err != nil || info.MessageCount != 4 || info.FirstPrompt != "a" {
		t.Fatalf("ReadInfo %+v, %v", info, err)
	}
}
