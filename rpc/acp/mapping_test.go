package acp

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/internal/i18n"
	"github.com/armadra/ama-rpc/internal/jsonlit"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/llm/fake"
	"github.com/armadra/ama-rpc/rpc/internal/wirecode"
	"github.com/armadra/ama-rpc/session"
	"github.com/armadra/ama-rpc/store"
)

func TestStopReason(t *testing.T) {
	cases := []struct {
		name string
		t    turn
		want string
		err  error
	}{
		{"stop", turn{out: out(llm.StopStop, "")}, "end_turn", nil},
		{"tool use", turn{out: out(llm.StopToolUse, "")}, "end_turn", nil},
		{"no run (a command)", turn{}, "end_turn", nil},
		{"length", turn{out: out(llm.StopLength, "")}, "max_tokens", nil},
		{"refusal", turn{out: out(llm.StopRefusal, "")}, "refusal", nil},
		{"aborted", turn{out: out(llm.StopAborted, "")}, "cancelled", nil},
		{"turn limit", turn{out: out(llm.StopStop, events.LimitTurns)}, "max_turn_requests", nil},
		{"cost limit", turn{out: out(llm.StopStop, events.LimitCost)}, "end_turn", nil},
		{"cancel wins", turn{out: out(llm.StopStop, events.LimitTurns), cancelled: true}, "cancelled", nil},
		{"cancel wins over an error", turn{out: out(llm.StopError, ""), cancelled: true}, "cancelled", nil},
		{"withdrawn", turn{out: out(llm.StopStop, ""), withdrawn: true, cancelled: true}, "", errCancelled},
		{"error", turn{out: session.Outcome{StopReason: llm.StopError, ErrorMessage: "429 rate limited"}}, "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := stopReason(&c.t)
			if got != c.want {
				t.Errorf("stop reason %q, want %q", got, c.want)
			}
			switch {
			case c.name == "error":
				if err == nil || err.Error() != "429 rate limited" || wireError(err, i18n.En).Code != jsonrpc2.CodeInternalError {
					t.Errorf("error = %v", err)
				}
			case c.err != nil:
				if !errors.Is(err, c.err) || wireError(err, i18n.En).Code != wirecode.RequestCancelled {
					t.Errorf("error = %v, want %v", err, c.err)
				}
			case err != nil:
				t.Errorf("unexpected error %v", err)
			}
		})
	}
}

func out(stop string, limit events.LimitKind) session.Outcome {
	return session.Outcome{StopReason: stop, Limit: limit}
}

// A turn that ran twice (plan run, then the execution run): usage adds
// up, the last run's stop reason decides, a turn limit stays.
func TestTurnAbsorbsRuns(t *testing.T) {
	var tu turn
	p := &events.PlanProposed{PlanID: "p"}
	tu.absorb(session.Outcome{StopReason: llm.StopStop, Usage: llm.Usage{Input: 1, Output: 2}, Limit: events.LimitTurns, Plan: p})
	tu.absorb(session.Outcome{StopReason: llm.StopLength, Usage: llm.Usage{Input: 10, Output: 20}, Limit: events.LimitCost})
	if tu.out.Usage.Input != 11 || tu.out.Usage.Output != 22 || tu.out.StopReason != llm.StopLength ||
		tu.out.Limit != events.LimitTurns || tu.out.Plan != nil {
		t.Fatalf("absorbed %+v", tu.out)
	}
	if got, _ := stopReason(&tu); got != stopMaxTurnRequests {
		t.Fatalf("stop reason %q", got)
	}
	var once turn
	once.absorb(session.Outcome{StopReason: llm.StopStop, Limit: events.LimitCost})
	once.absorb(session.Outcome{StopReason: llm.StopStop})
	if once.out.Limit != events.LimitCost {
		t.Fatalf("limit %q", once.out.Limit)
	}
}

func TestTurnResultUsage(t *testing.T) {
	tu := turn{out: session.Outcome{StopReason: llm.StopStop, Usage: llm.Usage{Input: 10, Output: 2, CacheRead: 3, CacheWrite: 4}}}
	res, err := tu.result()
	if err != nil {
		t.Fatal(err)
	}
	if got := js(t, res); got != `{"stopReason":"end_turn","usage":{"inputTokens":10,"outputTokens":2,"cachedReadTokens":3,"cachedWriteTokens":4,"totalTokens":19}}` {
		t.Errorf("result %s", got)
	}
}

func TestPermissionDecision(t *testing.T) {
	mk := func(outcome, option string) permissionResult {
		var r permissionResult
		r.Outcome.Outcome, r.Outcome.OptionID = outcome, option
		return r
	}
	cases := []struct {
		r    permissionResult
		want events.Approval
	}{
		{mk("selected", "allow_once"), "allow"},
		{mk("selected", "allow_always"), "allow_session"},
		{mk("selected", "reject_once"), "deny"},
		{mk("selected", "something_else"), "deny"},
		{mk("selected", ""), "deny"},
		{mk("cancelled", "allow_once"), "deny"},
		{mk("", ""), "deny"},
	}
	for _, c := range cases {
		if got := decision(c.r, false); got != c.want {
			t.Errorf("decision(%+v) = %s, want %s", c.r.Outcome, got, c.want)
		}
	}
	// Each option carries optionId, name and kind; ids are unique.
	seen := map[string]bool{}
	for _, o := range permissionOptions(i18n.En) {
		if o.OptionID == "" || o.Name == "" || o.Kind == "" || seen[o.OptionID] {
			t.Errorf("bad option %+v", o)
		}
		seen[o.OptionID] = true
	}
	if got := js(t, permissionOptions(i18n.En)); got != `[{"optionId":"allow_once","name":"Allow","kind":"allow_once"},{"optionId":"allow_always","name":"Allow for this session","kind":"allow_always"},{"optionId":"reject_once","name":"Deny","kind":"reject_once"}]` {
		t.Errorf("options %s", got)
	}
	// In Chinese the names change, the ids and kinds do not.
	if got := js(t, permissionOptions(i18n.Zh)); got != `[{"optionId":"allow_once","name":"允许","kind":"allow_once"},{"optionId":"allow_always","name":"本会话内允许","kind":"allow_always"},{"optionId":"reject_once","name":"拒绝","kind":"reject_once"}]` {
		t.Errorf("zh options %s", got)
	}
	if got := js(t, planOptions(i18n.Zh)); got != `[{"optionId":"approve","name":"批准并执行计划","kind":"allow_once"},{"optionId":"reject","name":"拒绝计划","kind":"reject_once"}]` {
		t.Errorf("zh plan options %s", got)
	}
}

func TestPromptInput(t *testing.T) {
	blocks := func(s ...string) []jsonlit.Raw {
		out := make([]jsonlit.Raw, len(s))
		for i, x := range s {
			out[i] = jsonlit.Raw(x)
		}
		return out
	}
	cases := []struct {
		name   string
		in     []jsonlit.Raw
		msg    string
		images int
		bad    bool
	}{
		{"text", blocks(`{"type":"text","text":"hi"}`), "hi", 0, false},
		{"texts and a link", blocks(`{"type":"text","text":"look at "}`, `{"type":"resource_link","uri":"file:///a.go","name":"a.go"}`, `{"type":"text","text":" please"}`), "look at \n@file:///a.go\n please", 0, false},
		{"issue 13: text then link", blocks(`{"type":"text","text":"look at"}`, `{"type":"resource_link","uri":"file:///project/notes.md","name":"notes.md"}`), "look at\n@file:///project/notes.md", 0, false},
		{"embedded text resource", blocks(`{"type":"text","text":"fix"}`, `{"type":"resource","resource":{"uri":"file:///a.go","text":"package a","mimeType":"text/x-go"}}`),
			"fix\n<resource uri=\"file:///a.go\">\npackage a\n</resource>", 0, false},
		{"resource between texts keeps its place", blocks(`{"type":"text","text":"a"}`, `{"type":"resource","resource":{"uri":"file:///b","text":"B"}}`, `{"type":"text","text":"c"}`),
			"a\n<resource uri=\"file:///b\">\nB\n</resource>\nc", 0, false},
		{"invalid base64", blocks(`{"type":"text","text":"see"}`, `{"type":"image","data":"not base64!","mimeType":"image/png"}`), "", 0, true},
		{"html is not an image", blocks(`{"type":"text","text":"see"}`, `{"type":"image","data":"QQ==","mimeType":"text/html"}`), "", 0, true},
		{"bad blob image", blocks(`{"type":"resource","resource":{"uri":"file:///p.png","blob":"%%%%","mimeType":"image/png"}}`), "", 0, true},
		{"image", blocks(`{"type":"text","text":"see"}`, `{"type":"image","data":"QQ==","mimeType":"image/png"}`), "see", 1, false},
		{"image only", blocks(`{"type":"image","data":"QQ==","mimeType":"image/png"}`), "", 1, false},
		{"blob image resource", blocks(`{"type":"resource","resource":{"uri":"file:///p.png","blob":"QQ==","mimeType":"image/png"}}`), "", 1, false},
		{"other blob", blocks(`{"type":"text","text":"x "}`, `{"type":"resource","resource":{"uri":"file:///b.bin","blob":"AA=="}}`), "x \n@file:///b.bin", 0, false},
		{"audio", blocks(`{"type":"audio","data":"AA==","mimeType":"audio/wav"}`), "", 0, true},
		{"unknown", blocks(`{"type":"video"}`), "", 0, true},
		{"not an object", blocks(`"text"`), "", 0, true},
		{"image without data", blocks(`{"type":"image","mimeType":"image/png"}`), "", 0, true},
		{"link without uri", blocks(`{"type":"resource_link","name":"x"}`), "", 0, true},
		{"empty", blocks(), "", 0, true},
		{"blank", blocks(`{"type":"text","text":"  "}`), "", 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in, err := promptInput(c.in, nil)
			if c.bad {
				if err == nil || wireError(err, i18n.En).Code != jsonrpc2.CodeInvalidParams {
					t.Fatalf("want invalid params, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if in.Message != c.msg || len(in.Images) != c.images {
				t.Errorf("got %q with %d images", in.Message, len(in.Images))
			}
		})
	}
}

func TestWireError(t *testing.T) {
	cases := []struct {
		err  error
		code int64
		data string
	}{
		{errorf(errInvalidParams, "bad"), jsonrpc2.CodeInvalidParams, ""},
		{errorf(errMethodNotFound, "no"), jsonrpc2.CodeMethodNotFound, ""},
		{errorf(errUnknownSession, "gone"), wirecode.ResourceNotFound, ""},
		{errorf(errCancelled, "c"), wirecode.RequestCancelled, ""},
		{errorf(errAuthRequired, "a"), wirecode.AuthRequired, ""},
		{fmt.Errorf("x: %w", session.ErrInvalidArguments), jsonrpc2.CodeInvalidParams, `{"code":"invalid_arguments"}`},
		{fmt.Errorf("x: %w", llm.ErrModelNotFound), jsonrpc2.CodeInvalidParams, `{"code":"model_not_found"}`},
		{fmt.Errorf("x: %w", fake.ErrInvalidScript), jsonrpc2.CodeInvalidParams, `{"code":"invalid_arguments"}`},
		{fmt.Errorf("x: %w", store.ErrNotFound), wirecode.ResourceNotFound, `{"code":"session_not_found"}`},
		{fmt.Errorf("x: %w", store.ErrLocked), jsonrpc2.CodeInternalError, `{"code":"session_locked"}`},
		{fmt.Errorf("x: %w", session.ErrBusy), jsonrpc2.CodeInternalError, `{"code":"busy"}`},
		{&llm.Error{Kind: llm.ErrNoKey, Message: "no key"}, wirecode.AuthRequired, `{"code":"no_api_key"}`},
		{errors.New("boom"), jsonrpc2.CodeInternalError, ""},
		{errParseLine, jsonrpc2.CodeParseError, ""},
		{errBadRequest, jsonrpc2.CodeInvalidRequest, ""},
		{&jsonrpc2.Error{Code: 42, Message: "as is"}, 42, ""},
	}
	for _, c := range cases {
		got := wireError(c.err, i18n.En)
		data := ""
		if got.Data != nil {
			data = string(*got.Data)
		}
		msg := c.err.Error()
		if je, ok := c.err.(*jsonrpc2.Error); ok {
			msg = je.Message
		}
		if got.Code != c.code || data != c.data || got.Message != msg {
			t.Errorf("wireError(%v) = %d %q %s, want %d %s", c.err, got.Code, got.Message, data, c.code, c.data)
		}
	}
}

func TestConfigOptions(t *testing.T) {
	reg := llm.NewRegistry(fake.New(fake.Options{}).Entry(),
		&llm.ProviderEntry{ID: "nokey", Name: "No key", Models: []*llm.Model{{Provider: "nokey", ID: "m"}}})
	opts := configOptions(settings{mode: "auto-edit", model: llm.ModelRef{Provider: "fake", ID: "echo"}, thinking: "high"}, reg, i18n.En)
	want := `[{"id":"mode","name":"Permission mode","category":"mode","type":"select","currentValue":"auto-edit","options":[` +
		`{"value":"plan","name":"Plan","description":"Read-only research: only read-only commands run; a plan is proposed for approval before anything changes"},` +
		`{"value":"allowlist","name":"Allowlist only","description":"Only calls matching an allow rule run; everything else is denied without asking"},` +
		`{"value":"default","name":"Manual","description":"Ask before writing files or running commands"},` +
		`{"value":"auto-edit","name":"Accept edits","description":"File edits are accepted; commands still ask"},` +
		`{"value":"auto","name":"Auto","description":"ama judges each step: safe ones run, risky ones ask"},` +
		`{"value":"full-auto","name":"Bypass permissions","description":"Everything runs (dangerous commands still ask)"}]},` +
		`{"id":"model","name":"Model","category":"model","type":"select","currentValue":"fake/echo","options":[{"group":"fake","name":"Fake (scripted)","options":[` +
		`{"value":"fake/echo","name":"Fake Echo"},{"value":"fake/reasoning","name":"Fake Reasoning"}]}]},` +
		`{"id":"thinking","name":"Thinking level","category":"thought_level","type":"select","currentValue":"off","options":[{"value":"off","name":"Off"}]}]`
	if got := js(t, opts); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	th := thinkingOption(settings{model: llm.ModelRef{Provider: "fake", ID: "reasoning"}, thinking: "high"}, reg, i18n.En)
	if th.CurrentValue != "high" || len(th.Options.([]selectValue)) != 6 {
		t.Errorf("reasoning model: %s", js(t, th))
	}
	modes := availableModes(i18n.En)
	if len(modes) != 6 || modes[0].ID != "plan" || modes[5].ID != "full-auto" {
		t.Errorf("modes %s", js(t, modes))
	}
	// zh: the labels and every id stay; the descriptions, the option names
	// and the thinking levels' names are Chinese.
	zh := js(t, configOptions(settings{mode: "auto-edit", model: llm.ModelRef{Provider: "fake", ID: "reasoning"}, thinking: "high"}, reg, i18n.Zh))
	for _, want := range []string{`"id":"mode","name":"权限模式"`, `"value":"default","name":"Manual","description":"写文件或运行命令之前先询问"`,
		`"id":"model","name":"模型"`, `"id":"thinking","name":"思考级别"`, `{"value":"xhigh","name":"极高"}`, `"currentValue":"auto-edit"`} {
		if !strings.Contains(zh, want) {
			t.Errorf("zh options lack %s: %s", want, zh)
		}
	}
	for _, m := range []string{"plan", "allowlist", "default", "auto-edit", "auto", "full-auto"} {
		if !validMode(m) {
			t.Errorf("%s is not valid", m)
		}
	}
	if validMode("yolo") {
		t.Error("yolo is valid")
	}
}

func TestListPage(t *testing.T) {
	var infos []store.Info
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 120; i > 0; i-- { // newest first, as store.List sorts
		created := base.Add(time.Duration(i) * time.Minute)
		infos = append(infos, store.Info{Path: "/s/" + store.FileName(created, fmt.Sprintf("id-%03d", i)), ID: fmt.Sprintf("id-%03d", i),
			Cwd: "/w", Modified: created, FirstPrompt: fmt.Sprintf("prompt %d\nsecond line", i), IsSubagent: i == 100})
	}
	infos[1].Name = "named"
	var all []sessionInfo
	cursor := ""
	pages := 0
	for {
		after := ""
		if cursor != "" {
			b, err := decodeCursor(cursor)
			if err != nil {
				t.Fatal(err)
			}
			after = b
		}
		page, next := listPage(infos, after, listPageSize)
		pages++
		all = append(all, page...)
		if next == "" {
			break
		}
		if len(page) != listPageSize {
			t.Fatalf("page %d has %d sessions", pages, len(page))
		}
		cursor = next
	}
	if pages != 3 || len(all) != 119 {
		t.Fatalf("%d pages, %d sessions", pages, len(all))
	}
	if all[0].SessionID != "id-120" || all[0].Title != "prompt 120" || all[1].Title != "named" || all[0].UpdatedAt != "2026-01-01T02:00:00.000Z" {
		t.Errorf("first: %+v %+v", all[0], all[1])
	}
	for _, s := range all {
		if s.SessionID == "id-100" {
			t.Error("a sub-agent session is listed")
		}
	}
}

// A fixed-text error keeps its JSON-RPC code and data.code and changes its
// message with the interface language; a text with details stays as is.
func TestWireErrorLang(t *testing.T) {
	for _, c := range []struct {
		err    error
		en, zh string
	}{
		{errUnknownSession, "session not found", "找不到会话"},
		{errMethodNotFound, "method not found", "找不到方法"},
		{session.ErrBusy, "session is busy", "会话正忙"},
		{errorf(errUnknownSession, "session %s not found", "x"), "session x not found", "session x not found"},
	} {
		en, zh := wireError(c.err, i18n.En), wireError(c.err, i18n.Zh)
		if en.Message != c.en || zh.Message != c.zh {
			t.Errorf("%v: en %q zh %q, want %q %q", c.err, en.Message, zh.Message, c.en, c.zh)
		}
		ed, zd := "", ""
		if en.Data != nil {
			ed = string(*en.Data)
		}
		if zh.Data != nil {
			zd = string(*zh.Data)
		}
		if en.Code != zh.Code || ed != zd {
			t.Errorf("%v: code or data differ: %d %s vs %d %s", c.err, en.Code, ed, zh.Code, zd)
		}
	}
}
