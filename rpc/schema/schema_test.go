package schema

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	v6 "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/rpc/internal/wirecode"
)

var digits = regexp.MustCompile(`[0-9]+`)

const fixtures = "../../test/fixtures/rpc"

type line struct {
	file string
	n    int
	text string
}

// goldenLines returns every line of every rpc golden (the out.jsonl of
// each test/fixtures/rpc case, as golden/ reads them).
func goldenLines(t *testing.T) []line {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(fixtures, "*", "out.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no rpc goldens under %s (%v)", fixtures, err)
	}
	return readLines(t, files)
}

// readLines returns the non-empty lines of files.
func readLines(t *testing.T, files []string) []line {
	t.Helper()
	var out []line
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 64<<20)
		for n := 1; sc.Scan(); n++ {
			if len(bytes.TrimSpace(sc.Bytes())) > 0 {
				out = append(out, line{f, n, sc.Text()})
			}
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// denormalize undoes what golden's normaliser changes against the wire's
// types (golden/normalize.go): it writes 0 for every "timestamp" key,
// while a session entry's timestamp is an ISO 8601 string. Anything else
// in a golden is the wire as written. ama's reference harness writes
// "<usage>" for a usage object.
func denormalize(v any) any {
	if m, ok := v.(map[string]any); ok && m["usage"] == "<usage>" {
		zero := json.Number("0")
		m["usage"] = map[string]any{"input": zero, "output": zero, "cacheRead": zero, "cacheWrite": zero, "totalTokens": zero}
	}
	// A session entry (in entry_appended, get_entries, get_tree): type,
	// id, parentId and the normalised timestamp.
	switch x := v.(type) {
	case map[string]any:
		_, hasParent := x["parentId"]
		_, hasID := x["id"]
		if n, ok := x["timestamp"].(json.Number); ok && n == "0" && hasParent && hasID {
			x["timestamp"] = "1970-01-01T00:00:00.000Z"
		}
		for _, c := range x {
			denormalize(c)
		}
	case []any:
		for _, c := range x {
			denormalize(c)
		}
	}
	return v
}

// failures validates lines against s and returns one message per failing
// line. A text is validated once (half the goldens' lines repeat another
// golden's byte for byte); every line with it gets its verdict.
func failures(t *testing.T, s *v6.Schema, lines []line) []string {
	t.Helper()
	var out []string
	verdict := map[string]error{}
	for _, l := range lines {
		err, seen := verdict[l.text]
		if !seen {
			var v any
			if v, err = v6.UnmarshalJSON(strings.NewReader(l.text)); err == nil {
				err = s.Validate(denormalize(v))
			}
			verdict[l.text] = err
		}
		if err != nil {
			out = append(out, fmt.Sprintf("%s:%d: %v", l.file, l.n, err))
		}
	}
	return out
}

func TestGoldensValidate(t *testing.T) {
	lines := goldenLines(t)
	bad, n := validateAll(t, lines)
	t.Logf("%d golden lines validated, %d failed", n, bad)
}

// validateAll validates lines against the generated schema and reports
// one error per distinct failure (with its count).
func validateAll(t *testing.T, lines []line) (int, int) {
	t.Helper()
	bad := failures(t, generated(t, ""), lines)
	// One report per distinct failure (its first line), with the count.
	seen, order := map[string][]string{}, []string(nil)
	for _, f := range bad {
		_, why, _ := strings.Cut(f, "\n")
		why = digits.ReplaceAllString(why, "N")
		if seen[why] == nil {
			order = append(order, why)
		}
		seen[why] = append(seen[why], f)
	}
	for _, why := range order {
		t.Errorf("%d lines, first %s", len(seen[why]), seen[why][0])
	}
	return len(bad), len(lines)
}

// ama's reference transcripts (../shared) validate too: the definitions
// marked stable claim to be ama's shapes.
func TestReferenceTranscriptsValidate(t *testing.T) {
	var files []string
	// ../shared beside the checkout (/work/main) or beside a worktree's
	// parent (/work/wt/<name>).
	for _, up := range []string{"../../../shared", "../../../../shared"} {
		if files, _ = filepath.Glob(filepath.Join(up, "reference/ama-goldens/rpc/*.out.jsonl")); len(files) > 0 {
			break
		}
	}
	if len(files) == 0 {
		t.Skip("ama's reference transcripts (../shared/reference/ama-goldens/rpc) are absent")
	}
	lines := readLines(t, files)
	bad, n := validateAll(t, lines)
	t.Logf("%d reference lines validated, %d failed", n, bad)

	// Stable is exactly the events ama's transcripts show.
	shown := map[string]bool{}
	for _, l := range lines {
		var head struct{ Type string }
		if json.Unmarshal([]byte(l.text), &head) == nil {
			shown[head.Type] = true
		}
	}
	for _, e := range Events() {
		if typ := e.Event.Type(); shown[typ] != (e.Stability == Stable) {
			t.Errorf("%s: marked %s, in ama's transcripts: %v", typ, e.Stability, shown[typ])
		}
	}
}

// Every command of an rpc golden that succeeded (its id has a success
// response in out.jsonl) matches the command definition. Lines that fail
// on purpose (parse errors, unknown commands) are left out.
func TestGoldenCommandsValidate(t *testing.T) {
	cmd := generated(t, "#/$defs/command")
	n, bad := validateCommands(t, cmd, goldenLines(t))
	for _, b := range bad {
		t.Error(b)
	}
	if n < 100 {
		t.Errorf("only %d commands validated", n)
	}
	for _, bad := range []string{`{"id":"1","type":"no_such"}`, `{"id":1,"type":"prompt"}`, `{"id":"1"}`} {
		v, _ := v6.UnmarshalJSON(strings.NewReader(bad))
		if cmd.Validate(v) == nil {
			t.Errorf("%s validates as a command", bad)
		}
	}
	t.Logf("%d golden commands validated", n)
}

// validateCommands validates, per rpc golden case, every command whose id
// has a success response in out.jsonl (lines that fail on purpose, parse
// errors and unknown commands, are left out) against cmd, and checks
// that the response (matched by id) names the command. The responses'
// data are validated by the line schema (data.<command>).
func validateCommands(t *testing.T, cmd *v6.Schema, lines []line) (int, []string) {
	t.Helper()
	ok := map[string]map[string]string{} // case dir -> id -> command of its success response
	for _, l := range lines {
		var r struct {
			ID      *string `json:"id"`
			Type    string  `json:"type"`
			Command string  `json:"command"`
			Success bool    `json:"success"`
		}
		if json.Unmarshal([]byte(l.text), &r) == nil && r.Type == "response" && r.Success && r.ID != nil {
			dir := filepath.Dir(l.file)
			if ok[dir] == nil {
				ok[dir] = map[string]string{}
			}
			ok[dir][*r.ID] = r.Command
		}
	}
	n, bad := 0, []string(nil)
	for dir, ids := range ok {
		b, err := os.ReadFile(filepath.Join(dir, "in.jsonl"))
		if err != nil {
			continue
		}
		for i, text := range strings.Split(string(b), "\n") {
			var head struct {
				ID   *string `json:"id"`
				Type string  `json:"type"`
			}
			if json.Unmarshal([]byte(text), &head) != nil || head.ID == nil {
				continue
			}
			command, answered := ids[*head.ID]
			if !answered {
				continue
			}
			if command != head.Type {
				bad = append(bad, fmt.Sprintf("%s/in.jsonl:%d: command %s answered as %s", dir, i+1, head.Type, command))
			}
			v, err := v6.UnmarshalJSON(strings.NewReader(text))
			if err == nil {
				err = cmd.Validate(v)
			}
			if err != nil {
				bad = append(bad, fmt.Sprintf("%s/in.jsonl:%d: %v", dir, i+1, err))
			}
			n++
		}
	}
	return n, bad
}

// A wire type that no longer matches the goldens fails them: agent_end
// with a renamed field, and a notification without its level.
func TestDriftedTypeFails(t *testing.T) {
	type renamed struct {
		StopReason string `json:"stop_reason"`
		WillRetry  bool   `json:"willRetry"`
	}
	type required struct {
		StopReason string `json:"stopReason"`
		WillRetry  bool   `json:"willRetry"`
		Turns      int    `json:"turns"`
	}
	lines := goldenLines(t)
	for name, typ := range map[string]reflect.Type{"renamed": reflect.TypeFor[renamed](), "new required": reflect.TypeFor[required]()} {
		s, err := generate(map[string]reflect.Type{"agent_end": typ})
		if err != nil {
			t.Fatal(err)
		}
		doc, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		// Only the lines the change concerns: validating every line again
		// per variant is what made this test slow under -race.
		bad := failures(t, compileAt(t, doc, "")[0], containing(lines, `"agent_end"`))
		if len(bad) == 0 {
			t.Errorf("%s agent_end field: every golden still validates", name)
		}
		for _, f := range bad {
			if !strings.Contains(f, "agent_end") && !strings.Contains(f, "stop_reason") && !strings.Contains(f, "turns") {
				t.Errorf("%s: unrelated failure: %s", name, f)
			}
		}
	}
}

// Lines a host must reject: each is a valid line with one change.
func TestBrokenLinesFail(t *testing.T) {
	s := generated(t, "")
	for _, tc := range []struct{ name, line string }{
		{"unknown event type", `{"type":"agent_begin"}`},
		{"unknown member", `{"type":"agent_end","stopReason":"stop","willRetry":false,"extra":1}`},
		{"missing member", `{"type":"agent_end","stopReason":"stop"}`},
		{"wrong member type", `{"type":"agent_end","stopReason":"stop","willRetry":"no"}`},
		{"code outside the table", `{"id":"1","type":"response","command":"prompt","success":false,"error":"x","code":"made_up"}`},
		{"notification code outside the table", `{"type":"notification","level":"error","message":"m","code":"made_up"}`},
		{"failure without error", `{"id":"1","type":"response","command":"prompt","success":false}`},
		{"success with a code", `{"id":"1","type":"response","command":"prompt","success":true,"code":"busy"}`},
		{"other protocol version", `{"type":"hello","protocolVersion":2,"agent":"ama","version":"x","capabilities":[]}`},
		{"unknown stream step", `{"type":"message_update","assistantMessageEvent":{"type":"text_middle","contentIndex":0}}`},
		{"unknown role", `{"type":"message_end","message":{"role":"robot","content":"x","timestamp":0}}`},
		{"unknown block", `{"type":"message_end","message":{"role":"user","content":[{"type":"video"}],"timestamp":0}}`},
		{"entry without id", `{"type":"entry_appended","entry":{"type":"message","parentId":null,"timestamp":"t"}}`},
	} {
		v, err := v6.UnmarshalJSON(strings.NewReader(tc.line))
		if err != nil {
			t.Fatal(err)
		}
		if s.Validate(v) == nil {
			t.Errorf("%s: %s validates", tc.name, tc.line)
		}
	}
	for _, ok := range []string{
		`{"type":"agent_end","stopReason":"stop","willRetry":false}`,
		`{"id":"1","type":"response","command":"prompt","success":false,"error":"x","code":"busy"}`,
		`{"type":"notification","level":"error","message":"m","code":"session_write_failed"}`,
		`{"type":"message_end","message":{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":0}}`,
	} {
		v, _ := v6.UnmarshalJSON(strings.NewReader(ok))
		if err := s.Validate(v); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

// The code enum is wirecode's table, every code of it.
func TestCodesFromTable(t *testing.T) {
	s, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range s.Defs["response"].Properties["code"].Enum {
		got = append(got, c.(string))
	}
	if want := wirecode.NativeCodes(); !slices.Equal(got, want) || !slices.Contains(got, wirecode.Busy) {
		t.Errorf("code enum %v, table %v", got, want)
	}
}

// receivers returns the sorted names of the types of package dir with a
// method named method.
func receivers(t *testing.T, dir, method string) []string {
	t.Helper()
	pkgs, err := parser.ParseDir(token.NewFileSet(), dir, func(fi os.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Recv == nil || fd.Name.Name != method {
					continue
				}
				typ := fd.Recv.List[0].Type
				if star, ok := typ.(*ast.StarExpr); ok {
					typ = star.X
				}
				if id, ok := typ.(*ast.Ident); ok {
					out = append(out, id.Name)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// The content block and message lists are llm's closed sets.
func TestClosedSetsComplete(t *testing.T) {
	for method, list := range map[string][]member{"contentBlock": contentBlocks(), "MessageRole": messageKinds()} {
		var listed []string
		for _, m := range list {
			listed = append(listed, m.t.Name())
		}
		sort.Strings(listed)
		if declared := receivers(t, "../../llm", method); !slices.Equal(declared, listed) {
			t.Errorf("llm types with %s %v, listed %v", method, declared, listed)
		}
	}
}

// README's "Error codes" table documents every code of the enum.
func TestCodesDocumented(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, _ := strings.Cut(string(b), "\n## Error codes\n")
	sec, _, _ = strings.Cut(sec, "\n## ")
	for _, c := range wirecode.NativeCodes() {
		if !strings.Contains(sec, "`"+c+"`") {
			t.Errorf("README's Error codes table lacks %s", c)
		}
	}
}

// The stream event types are llm's Ev constants, all of them.
func TestStreamEventTypesComplete(t *testing.T) {
	pkgs, err := parser.ParseDir(token.NewFileSet(), "../../llm", func(fi os.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var declared, listed []string
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, d := range f.Decls {
				gd, ok := d.(*ast.GenDecl)
				if !ok || gd.Tok != token.CONST {
					continue
				}
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, n := range vs.Names {
						if strings.HasPrefix(n.Name, "Ev") && i < len(vs.Values) {
							if lit, ok := vs.Values[i].(*ast.BasicLit); ok {
								declared = append(declared, strings.Trim(lit.Value, `"`))
							}
						}
					}
				}
			}
		}
	}
	for _, v := range streamEventTypes() {
		listed = append(listed, v.(string))
	}
	sort.Strings(declared)
	sort.Strings(listed)
	if len(declared) == 0 || !slices.Equal(declared, listed) {
		t.Errorf("llm's Ev constants %v, listed %v", declared, listed)
	}
}

// Events lists every type of package events with a Type method.
func TestEventsListComplete(t *testing.T) {
	declared := receivers(t, "../../events", "Type")
	var listed []string
	for _, e := range Events() {
		listed = append(listed, reflect.TypeOf(e.Event).Name())
		if e.Stability != Stable && e.Stability != Experimental {
			t.Errorf("%s: stability %q", e.Event.Type(), e.Stability)
		}
	}
	sort.Strings(listed)
	if !slices.Equal(declared, listed) {
		t.Errorf("events with a Type method %v, listed %v", declared, listed)
	}
}

// Every definition says its stability; the document its version.
func TestMarked(t *testing.T) {
	s, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	if s.Schema != Draft || s.Extra["x-protocolVersion"] == nil {
		t.Errorf("$schema %q, x-protocolVersion %v", s.Schema, s.Extra["x-protocolVersion"])
	}
	for name, d := range s.Defs {
		if name == "event" {
			continue
		}
		if st := d.Extra["x-stability"]; st != "stable" && st != "experimental" {
			t.Errorf("%s: x-stability %v", name, st)
		}
	}
}

// A command's wire type that no longer matches the goldens fails them:
// set_model's parameters with a renamed member (the commands of the
// goldens fail) and get_messages' data with a renamed member (their
// responses fail).
func TestDriftedCommandTypeFails(t *testing.T) {
	type renamedParams struct {
		Provider string `json:"provider"`
		ModelID  string `json:"model_id"`
	}
	type renamedData struct {
		Messages []json.RawMessage `json:"msgs"`
	}
	lines := goldenLines(t)
	for def, typ := range map[string]reflect.Type{
		ParamsDef("set_model"):  reflect.TypeFor[renamedParams](),
		DataDef("get_messages"): reflect.TypeFor[renamedData](),
	} {
		s, err := generate(map[string]reflect.Type{def: typ})
		if err != nil {
			t.Fatal(err)
		}
		doc, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		at := compileAt(t, doc, "", "#/$defs/command")
		bad := failures(t, at[0], containing(lines, `"get_messages"`))
		n, badCmds := validateCommands(t, at[1], lines)
		bad = append(bad, badCmds...)
		if len(bad) == 0 {
			t.Errorf("%s drifted: every golden still validates (%d commands)", def, n)
		}
		for _, f := range bad {
			if !strings.Contains(f, "model_id") && !strings.Contains(f, "msgs") && !strings.Contains(f, "modelId") && !strings.Contains(f, "messages") {
				t.Errorf("%s: unrelated failure: %s", def, f)
			}
		}
		t.Logf("%s drifted: %d failures", def, len(bad))
	}
}

// Commands and data a host must reject: each has one change.
func TestBrokenCommandsFail(t *testing.T) {
	cmd, line := generated(t, "#/$defs/command"), generated(t, "")
	for _, tc := range []struct {
		s          *v6.Schema
		name, text string
	}{
		{cmd, "missing parameter", `{"id":"1","type":"set_model","provider":"fake"}`},
		{cmd, "unknown parameter", `{"id":"1","type":"get_state","verbose":true}`},
		{cmd, "wrong parameter type", `{"id":"1","type":"prompt","message":"hi","interrupt":"yes"}`},
		{cmd, "decision outside the enum", `{"id":"1","type":"permission_response","requestId":"r","decision":"maybe"}`},
		{line, "data missing a member", `{"id":"1","type":"response","command":"get_last_assistant_text","success":true,"data":{}}`},
		{line, "data of another command", `{"id":"1","type":"response","command":"abort_retry","success":true,"data":{"accepted":true}}`},
		{line, "success without data", `{"id":"1","type":"response","command":"get_tools","success":true}`},
	} {
		v, err := v6.UnmarshalJSON(strings.NewReader(tc.text))
		if err != nil {
			t.Fatal(err)
		}
		if tc.s.Validate(v) == nil {
			t.Errorf("%s: %s validates", tc.name, tc.text)
		}
	}
	for _, ok := range []string{
		`{"id":"1","type":"set_model","provider":"fake","modelId":"echo"}`,
		`{"type":"prompt","message":"hi","interrupt":true}`,
		`{"id":"1","type":"get_plan"}`,
	} {
		v, _ := v6.UnmarshalJSON(strings.NewReader(ok))
		if err := cmd.Validate(v); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

// compileAt compiles a generated document with santhosh-tekuri/jsonschema,
// an implementation independent of the generator, once, and returns the
// schemas at fragments ("" = root), in order.
func compileAt(t *testing.T, doc []byte, fragments ...string) []*v6.Schema {
	t.Helper()
	v, err := v6.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	c := v6.NewCompiler()
	const url = "https://github.com/armadra/ama-rpc/schema/rpc.schema.json"
	if err := c.AddResource(url, v); err != nil {
		t.Fatal(err)
	}
	var out []*v6.Schema
	for _, fragment := range fragments {
		s, err := c.Compile(url + fragment)
		if err != nil {
			t.Fatalf("compile %s: %v", fragment, err)
		}
		out = append(out, s)
	}
	return out
}

// The approval enum is events' constants of type Approval, all valid.
func TestApprovalsComplete(t *testing.T) {
	pkgs, err := parser.ParseDir(token.NewFileSet(), "../../events", func(fi os.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var declared, listed []string
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, d := range f.Decls {
				gd, ok := d.(*ast.GenDecl)
				if !ok || gd.Tok != token.CONST {
					continue
				}
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Approval" {
						continue
					}
					for i := range vs.Names {
						if lit, ok := vs.Values[i].(*ast.BasicLit); ok {
							declared = append(declared, strings.Trim(lit.Value, `"`))
						}
					}
				}
			}
		}
	}
	for _, v := range approvals() {
		a := v.(events.Approval)
		if !a.Valid() && a != events.ApprovalDefer { // defer: only with durable approvals
			t.Errorf("%s is listed but not Valid", a)
		}
		listed = append(listed, string(a))
	}
	sort.Strings(declared)
	sort.Strings(listed)
	if len(declared) == 0 || !slices.Equal(declared, listed) {
		t.Errorf("events' Approval constants %v, listed %v", declared, listed)
	}
}

// Every stdout line of the print-mode goldens that use --output-format
// json or stream-json validates as a print line.
func TestPrintGoldensValidate(t *testing.T) {
	s := generated(t, "#/$defs/"+PrintLine)
	cases, _ := filepath.Glob("../../test/fixtures/print/*/case.json")
	var files []string
	for _, c := range cases {
		b, err := os.ReadFile(c)
		if err != nil {
			t.Fatal(err)
		}
		var cs struct{ Args []string }
		if err := json.Unmarshal(b, &cs); err != nil {
			t.Fatal(err)
		}
		if i := slices.Index(cs.Args, "--output-format"); i >= 0 && i+1 < len(cs.Args) && cs.Args[i+1] != "text" && slices.Contains(cs.Args, "-p") {
			files = append(files, filepath.Join(filepath.Dir(c), "out.txt"))
		}
	}
	if len(files) < 5 {
		t.Fatalf("only %d print goldens with a JSON format", len(files))
	}
	lines := readLines(t, files)
	for _, f := range failures(t, s, lines) {
		t.Error(f)
	}
	results := 0
	for _, l := range lines {
		if strings.HasPrefix(l.text, `{"type":"result"`) {
			results++
		}
	}
	if results == 0 {
		t.Error("no result line validated")
	}
	t.Logf("%d print lines of %d goldens validated (%d result lines)", len(lines), len(files), results)
}

// containing returns the lines that contain sub.
func containing(lines []line, sub string) []line {
	var out []line
	for _, l := range lines {
		if strings.Contains(l.text, sub) {
			out = append(out, l)
		}
	}
	return out
}

// shared is the generated document compiled once for the tests that use
// it unchanged (compiling it takes about a second, many times that under
// -race).
var shared struct {
	once sync.Once
	c    *v6.Compiler
	err  error
	mu   sync.Mutex
	at   map[string]*v6.Schema
}

// generated returns the schema at fragment of the generated document.
func generated(t *testing.T, fragment string) *v6.Schema {
	t.Helper()
	shared.once.Do(func() {
		doc, err := JSON()
		if err != nil {
			shared.err = err
			return
		}
		v, err := v6.UnmarshalJSON(bytes.NewReader(doc))
		if err != nil {
			shared.err = err
			return
		}
		shared.c = v6.NewCompiler()
		shared.err = shared.c.AddResource("https://github.com/armadra/ama-rpc/schema/rpc.schema.json", v)
		shared.at = map[string]*v6.Schema{}
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if s, ok := shared.at[fragment]; ok {
		return s
	}
	s, err := shared.c.Compile("https://github.com/armadra/ama-rpc/schema/rpc.schema.json" + fragment)
	if err != nil {
		t.Fatalf("compile %s: %v", fragment, err)
	}
	shared.at[fragment] = s
	return s
}
