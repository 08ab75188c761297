package golden_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/armadra/ama-rpc/golden"
)

// Issue 18: ama's cache scripts (read from ../shared, never copied)
// produce the cache events ama's setup describes.

func refScript(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(refScripts, name))
	if err != nil {
		t.Skipf("reference script not available: %v", err)
	}
	return b
}

// response returns the data of the response with id.
func responseData(t *testing.T, r *golden.Run, id string) map[string]any {
	t.Helper()
	for _, l := range r.Lines() {
		var m map[string]any
		if json.Unmarshal(l, &m) == nil && m["type"] == "response" && m["id"] == id {
			d, _ := m["data"].(map[string]any)
			return d
		}
	}
	t.Fatalf("no response %s", id)
	return nil
}

// cache-miss.json: a cache write, a full read, then the whole prefix billed
// again → one cache_miss evicted 30 500 (the host e2e example of ama).
func TestRefCacheMiss(t *testing.T) {
	r := golden.Start(t, golden.Config{Args: []string{"--model", "fake/echo"}, Script: refScript(t, "cache-miss.json"),
		Files: map[string]string{"README.md": "# project\n"}})
	r.Send(`{"id":"p","type":"prompt","message":"read it"}`)
	r.WaitFor("agent_settled", 1, isType("agent_settled"))
	r.Send(`{"id":"stats","type":"get_session_stats"}`)
	r.WaitFor("stats", 1, isResponse("stats"))
	r.CloseStdin()
	if code := r.Wait(); code != 0 {
		t.Fatalf("exit %d: %s", code, r.Stderr())
	}
	misses := eventsOf(r, "cache_miss")
	if len(misses) != 1 || num(misses[0]["missedTokens"]) != 30500 || misses[0]["reason"] != "evicted" {
		t.Fatalf("cache_miss events: %v", misses)
	}
	// missedCost = 30 500 × (1 − 0.1) / 1e6 with the fake prices.
	if c := num(misses[0]["missedCost"]); c < 0.027449 || c > 0.027451 {
		t.Errorf("missedCost %v", c)
	}
	cache := responseData(t, r, "stats")["cache"].(map[string]any)
	if cache["reporting"] != "reported" || num(cache["reBilledTokens"]) != 30500 || num(cache["lastHitRate"]) != 0 {
		t.Errorf("stats cache %v", cache)
	}
	if w := cache["warming"].(map[string]any); w["reason"] != "no_ttl" || w["state"] != "stopped" {
		t.Errorf("warming %v", w)
	}
	if n := eventsOf(r, "cache_warm"); len(n) != 0 {
		t.Errorf("cache_warm without a TTL: %v", n)
	}
}

// cache-stability-20.json: twenty prompts with a stable 1 000-token prefix
// (below minTokens, so never compared) → no cache_miss at all, a reported
// endpoint and a hit rate of Σread / Σprompt.
func TestRefCacheStability20(t *testing.T) {
	r := golden.Start(t, golden.Config{Args: []string{"--model", "fake/echo"}, Script: refScript(t, "cache-stability-20.json"),
		Files: map[string]string{"AGENTS.md": "# agents\n"}})
	for i := 1; i <= 20; i++ {
		r.Send(`{"type":"prompt","message":"question"}`)
		r.WaitFor("agent_settled", i, isType("agent_settled"))
	}
	r.Send(`{"id":"stats","type":"get_session_stats"}`)
	r.WaitFor("stats", 1, isResponse("stats"))
	r.CloseStdin()
	if code := r.Wait(); code != 0 {
		t.Fatalf("exit %d: %s", code, r.Stderr())
	}
	if m := eventsOf(r, "cache_miss"); len(m) != 0 {
		t.Fatalf("cache_miss on a stable prefix: %v", m)
	}
	data := responseData(t, r, "stats")
	cache := data["cache"].(map[string]any)
	if cache["reporting"] != "reported" || num(cache["reBilledTokens"]) != 0 ||
		num(cache["misses"].(map[string]any)["count"]) != 0 {
		t.Fatalf("stats cache %v", cache)
	}
	tok := data["tokens"].(map[string]any)
	want := num(tok["cacheRead"]) / (num(tok["input"]) + num(tok["cacheRead"]) + num(tok["cacheWrite"]))
	if got := num(cache["hitRate"]); got != want || got < 0.5 {
		t.Errorf("hitRate %v, want %v", got, want)
	}
	if num(cache["lastHitRate"]) != 0.9 {
		t.Errorf("lastHitRate %v", cache["lastHitRate"])
	}
}

// manualTimers captures the cache-warming timers so a test fires them.
type manualTimers struct {
	mu    sync.Mutex
	armed []func()
	delay []time.Duration
	seen  chan struct{}
}

func (m *manualTimers) after(d time.Duration, f func()) func() bool {
	m.mu.Lock()
	m.armed = append(m.armed, f)
	m.delay = append(m.delay, d)
	m.mu.Unlock()
	select {
	case m.seen <- struct{}{}:
	default:
	}
	return func() bool { return true }
}

func (m *manualTimers) fireLast() {
	m.mu.Lock()
	f := m.armed[len(m.armed)-1]
	m.mu.Unlock()
	f()
}

// cache-warm.json with a 300 s prompt-cache TTL on fake/echo: the first
// reply writes the cache and schedules a warm 270 s after its send; the
// warm fires while the long bash call runs and consumes the script's 1-token
// "warm" reply (a cache read: the warm is sent and rescheduled); the final
// reply reads the cache, so there is no miss. The warm never enters the
// transcript; it is a usage entry (kind cache_warm), counted in the stats
// and listed in the trace's aux.
func TestRefCacheWarm(t *testing.T) {
	timers := &manualTimers{seen: make(chan struct{}, 8)}
	cfg := `{"modelOverrides":[{"provider":"fake","id":"echo","promptCache":{"short":300}}],"permission":{"mode":"full-auto"}}`
	r := golden.Start(t, golden.Config{Args: []string{"--model", "fake/echo"}, Script: refScript(t, "cache-warm.json"),
		UserConfig: []byte(cfg), AfterFunc: timers.after})
	r.Send(`{"id":"p","type":"prompt","message":"run the slow thing"}`)
	r.WaitFor("scheduled", 1, func(o *golden.Object) bool {
		return o.String("type") == "cache_warm" && o.String("phase") == "scheduled"
	})
	r.WaitFor("bash start", 1, isType("tool_execution_start"))
	timers.mu.Lock()
	if d := timers.delay[0]; d < 269*time.Second || d > 270*time.Second {
		t.Errorf("warm armed %v after the send, want 270 s", d)
	}
	timers.mu.Unlock()
	timers.fireLast()
	r.WaitFor("sent", 1, func(o *golden.Object) bool {
		return o.String("type") == "cache_warm" && o.String("phase") == "sent"
	})
	r.WaitFor("agent_settled", 1, isType("agent_settled"))
	r.Send(`{"id":"stats","type":"get_session_stats"}`)
	r.WaitFor("stats", 1, isResponse("stats"))
	r.Send(`{"id":"trace","type":"get_trace"}`)
	r.WaitFor("trace", 1, isResponse("trace"))
	r.CloseStdin()
	if code := r.Wait(); code != 0 {
		t.Fatalf("exit %d: %s", code, r.Stderr())
	}
	var phases []string
	for _, ev := range eventsOf(r, "cache_warm") {
		phases = append(phases, ev["phase"].(string))
		if ev["phase"] == "sent" {
			u := ev["usage"].(map[string]any)
			if num(u["cacheRead"]) != 60000 || num(u["output"]) != 1 || ev["cost"] == nil {
				t.Errorf("sent %v", ev)
			}
		}
	}
	// scheduled (reply 1), sent + scheduled (the warm), scheduled (reply 2).
	if got := strings.Join(phases, ","); got != "scheduled,sent,scheduled,scheduled" {
		t.Errorf("cache_warm phases %s", got)
	}
	if m := eventsOf(r, "cache_miss"); len(m) != 0 {
		t.Errorf("cache_miss after a warm: %v", m)
	}
	for _, ev := range eventsOf(r, "message_end") {
		if strings.Contains(string(mustJSON(ev)), `"text":"warm"`) {
			t.Errorf("the warm reply entered the transcript: %v", ev)
		}
	}
	data := responseData(t, r, "stats")
	if num(data["assistantMessages"]) != 2 {
		t.Errorf("assistantMessages %v", data["assistantMessages"])
	}
	// tokens include the warm: 60 000 written, 60 000 read twice.
	if tok := data["tokens"].(map[string]any); num(tok["cacheRead"]) != 120000 || num(tok["cacheWrite"]) != 60000 {
		t.Errorf("tokens %v", tok)
	}
	w := data["cache"].(map[string]any)["warming"].(map[string]any)
	// Mode streaming: agent_settled ends warming silently.
	if num(w["sent"]) != 1 || w["costUsd"] == nil || w["state"] != "inactive" {
		t.Errorf("warming %v", w)
	}
	aux := responseData(t, r, "trace")["trace"].(map[string]any)["aux"].([]any)
	if len(aux) != 1 || aux[0].(map[string]any)["purpose"] != "cache_warm" {
		t.Errorf("trace aux %v", aux)
	}
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }

// Checklist 1 over HTTP: a loopback OpenAI-compatible server reports
// cached prompt tokens (prompt_tokens_details.cached_tokens); the adapter
// turns them into cacheRead, the endpoint becomes reported, and the
// second reply, billed in full, is an evicted miss of 30 500 tokens.
func TestHTTPCachedTokensMiss(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		prompt, cached := 30500, 30000
		if calls.Add(1) > 1 {
			prompt, cached = 31000, 0
		}
		u := fmt.Sprintf(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"mock","choices":[],`+
			`"usage":{"prompt_tokens":%d,"completion_tokens":5,"total_tokens":%d,"prompt_tokens_details":{"cached_tokens":%d}}}`,
			prompt, prompt+5, cached)
		sse(w, chunk(`{"role":"assistant","content":"ok"}`, ""), chunk(`{}`, "stop"), u)
	}))
	defer srv.Close()
	r := golden.Start(t, golden.Config{Args: []string{"--model", "openai/mock"},
		Env: map[string]string{"OPENAI_BASE_URL": srv.URL + "/v1", "OPENAI_API_KEY": "sk-test"}})
	for i := 1; i <= 2; i++ {
		r.Send(`{"type":"prompt","message":"again"}`)
		r.WaitFor("agent_settled", i, isType("agent_settled"))
	}
	r.Send(`{"id":"stats","type":"get_session_stats"}`)
	r.WaitFor("stats", 1, isResponse("stats"))
	r.CloseStdin()
	if code := r.Wait(); code != 0 {
		t.Fatalf("exit %d: %s", code, r.Stderr())
	}
	m := eventsOf(r, "cache_miss")
	if len(m) != 1 || num(m[0]["missedTokens"]) != 30500 || m[0]["reason"] != "evicted" {
		t.Fatalf("cache_miss %v", m)
	}
	data := responseData(t, r, "stats")
	cache := data["cache"].(map[string]any)
	if cache["reporting"] != "reported" || num(cache["hitRate"]) != 30000.0/61500 || num(data["tokens"].(map[string]any)["cacheRead"]) != 30000 {
		t.Fatalf("stats %v", data)
	}
}

// cache.onWarmingDecision: the host adapter's handler becomes the
// session's warming decider (bridge cache.decider / cache.decide): it
// sees the built-in decision, and its "stop" stops warming (declined)
// without a warm request.
func TestHostWarmingDecision(t *testing.T) {
	canvasAdapter(t) // skips without node; the adapter below is our own
	dir := t.TempDir()
	seen := filepath.Join(dir, "decision.json")
	host := filepath.Join(dir, "warm.cjs")
	if err := os.WriteFile(host, []byte(`const fs = require("fs");
module.exports = { hostApi: 1, create(api) {
  api.cache.onWarmingDecision(() => "warm"); // replaced by the later one
  api.cache.onWarmingDecision((d) => { fs.writeFileSync(`+"`"+seen+"`"+`, JSON.stringify(d)); return "stop"; });
  return { id: "warm-host" };
} };
`), 0o644); err != nil {
		t.Fatal(err)
	}
	timers := &manualTimers{seen: make(chan struct{}, 8)}
	cfg := `{"modelOverrides":[{"provider":"fake","id":"echo","promptCache":{"short":300}}],"permission":{"mode":"full-auto"}}`
	r := golden.Start(t, golden.Config{Args: []string{"--model", "fake/echo", "--host", host}, Script: refScript(t, "cache-warm.json"),
		UserConfig: []byte(cfg), AfterFunc: timers.after})
	r.Send(`{"id":"p","type":"prompt","message":"run the slow thing"}`)
	r.WaitFor("scheduled", 1, func(o *golden.Object) bool {
		return o.String("type") == "cache_warm" && o.String("phase") == "scheduled"
	})
	r.WaitFor("bash start", 1, isType("tool_execution_start"))
	timers.fireLast()
	r.WaitFor("stopped", 1, func(o *golden.Object) bool {
		return o.String("type") == "cache_warm" && o.String("phase") == "stopped"
	})
	r.WaitFor("agent_settled", 1, isType("agent_settled"))
	r.CloseStdin()
	if code := r.Wait(); code != 0 {
		t.Fatalf("exit %d: %s", code, r.Stderr())
	}
	for _, ev := range eventsOf(r, "cache_warm") {
		if ev["phase"] == "sent" {
			t.Errorf("a warm was sent although the host said stop: %v", ev)
		}
		if ev["phase"] == "stopped" && ev["reason"] != "declined" {
			t.Errorf("stop reason %v", ev)
		}
	}
	var d map[string]any
	data, _ := os.ReadFile(seen)
	if err := json.Unmarshal(data, &d); err != nil || d["action"] != "warm" || d["phase"] != "streaming" || num(d["promptTokens"]) <= 0 || d["probability"] != 1.0 {
		t.Fatalf("decision the host saw %s: %v", data, err)
	}
}
