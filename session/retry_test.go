package session

// Retries, fallback, abort_retry and overflow (Session.reply and its
// helpers). Backoffs sleep on the bubble's fake clock, so the elapsed time
// of a run is exactly the sum of its waits.

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/llm/fake"
	"github.com/armadra/ama-rpc/store"
)

func retryAfter(kind string, ms int64) fake.Response {
	return fake.Response{Error: &fake.ErrorSpec{Kind: kind, RetryAfterMs: ms}}
}

// contextEdits returns the reasons of the context_edit entries appended.
func contextEdits(r *recorder) []string {
	var out []string
	for _, e := range eventsOf[events.EntryAppended](r) {
		if e.Entry.Type == store.TypeContextEdit {
			var aux struct {
				Reason string `json:"reason"`
			}
			_ = e.Entry.Decode(&aux)
			out = append(out, aux.Reason)
		}
	}
	return out
}

func TestRetry(t *testing.T) {
	for _, tc := range []struct {
		name     string
		settings Settings
		script   []fake.Response
		delays   []int64 // auto_retry_start delayMs
		success  bool    // auto_retry_end success (when delays is not empty)
		attempt  int     // auto_retry_end attempt
		stop     string  // agent_end stopReason
		calls    int
	}{
		{"rate limit then ok", Settings{}, []fake.Response{fail("rate_limit"), reply("ok")}, []int64{2000}, true, 2, llm.StopStop, 2},
		{"backoff doubles", Settings{}, []fake.Response{fail("server"), fail("network"), reply("ok")}, []int64{2000, 4000}, true, 3, llm.StopStop, 3},
		{"base delay setting", Settings{RetryBaseDelay: 100 * time.Millisecond}, []fake.Response{fail("server"), fail("server"), reply("ok")}, []int64{100, 200}, true, 3, llm.StopStop, 3},
		{"retry-after wins when longer", Settings{}, []fake.Response{retryAfter("rate_limit", 5000), reply("ok")}, []int64{5000}, true, 2, llm.StopStop, 2},
		{"retry-after is capped", Settings{}, []fake.Response{retryAfter("rate_limit", 120000), reply("ok")}, []int64{60000}, true, 2, llm.StopStop, 2},
		{"cut stream is retried", Settings{}, []fake.Response{{Text: text("par"), Error: &fake.ErrorSpec{Kind: "disconnect"}}, reply("ok")}, []int64{2000}, true, 2, llm.StopStop, 2},
		{"retries exhausted", Settings{MaxRetries: 2}, []fake.Response{fail("server"), fail("server"), fail("server")}, []int64{2000, 4000}, false, 3, llm.StopError, 3},
		{"auth is not retried", Settings{}, []fake.Response{fail("auth")}, nil, false, 0, llm.StopError, 1},
		{"auto retry off", Settings{NoAutoRetry: true}, []fake.Response{fail("rate_limit")}, nil, false, 0, llm.StopError, 1},
		{"overloaded is retried without a fallback", Settings{}, []fake.Response{fail("overloaded"), reply("ok")}, []int64{2000}, true, 2, llm.StopStop, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, setup{script: &fake.Script{Responses: tc.script}, settings: tc.settings})
				defer e.s.Close()
				start := time.Now()
				e.runPrompt(t, "hi")
				elapsed := time.Since(start)
				var delays []int64
				var sum time.Duration
				for _, rs := range eventsOf[events.AutoRetryStart](e.rec) {
					delays = append(delays, rs.DelayMs)
					sum += time.Duration(rs.DelayMs) * time.Millisecond
					if rs.ErrorMessage == "" {
						t.Error("auto_retry_start without the error message")
					}
				}
				if !slices.Equal(delays, tc.delays) {
					t.Errorf("retry delays %v, want %v", delays, tc.delays)
				}
				if elapsed != sum {
					t.Errorf("the run took %v on the fake clock, want the sum of the waits %v", elapsed, sum)
				}
				ends := eventsOf[events.AutoRetryEnd](e.rec)
				if len(tc.delays) == 0 {
					if len(ends) != 0 {
						t.Errorf("auto_retry_end %+v without retries", ends)
					}
				} else if len(ends) != 1 || ends[0].Success != tc.success || ends[0].Attempt != tc.attempt || (ends[0].FinalError != "") == tc.success {
					t.Errorf("auto_retry_end %+v, want success %v attempt %d", ends, tc.success, tc.attempt)
				}
				if got := eventsOf[events.AgentEnd](e.rec); len(got) != 1 || got[0].StopReason != tc.stop {
					t.Errorf("agent_end %+v, want %s", got, tc.stop)
				}
				if got := e.fp.Calls(); got != tc.calls {
					t.Errorf("%d model requests, want %d", got, tc.calls)
				}
				// Each failed attempt that was retried leaves the context.
				if got := contextEdits(e.rec); len(got) != len(tc.delays) {
					t.Errorf("context edits %q, want one per retry", got)
				}
				msgs, _ := e.s.Messages()
				failed := 0
				for _, m := range msgs {
					if a, ok := m.(*llm.AssistantMessage); ok && a.Failed() {
						failed++
					}
				}
				if want := 0; tc.success && failed != want {
					t.Errorf("%d failed attempts still in the context", failed)
				}
			})
		})
	}
}

// TestFallback pins Session.fallback: an overloaded endpoint (or exhausted
// retries) with a fallback model gets one attempt on that model, framed by
// model_fallback and two model_changed events; the session keeps its model.
func TestFallback(t *testing.T) {
	reasoning := llm.ModelRef{Provider: fake.ProviderID, ID: "reasoning"}
	for _, tc := range []struct {
		name     string
		settings Settings
		script   []fake.Response
		retries  int
		fellBack bool
		calls    int
	}{
		{"overloaded goes straight to the fallback", Settings{FallbackModel: reasoning}, []fake.Response{fail("overloaded"), reply("ok")}, 0, true, 2},
		{"exhausted retries fall back", Settings{FallbackModel: reasoning, MaxRetries: 1}, []fake.Response{fail("server"), fail("server"), reply("ok")}, 1, true, 3},
		{"unknown fallback model", Settings{FallbackModel: llm.ModelRef{Provider: "fake", ID: "nope"}, MaxRetries: 1}, []fake.Response{fail("overloaded"), fail("overloaded")}, 0, false, 1},
		{"fallback equal to the session model", Settings{FallbackModel: llm.ModelRef{Provider: "fake", ID: "echo"}}, []fake.Response{fail("overloaded")}, 0, false, 1},
		{"no fallback for errors that are not retryable", Settings{FallbackModel: reasoning}, []fake.Response{fail("auth")}, 0, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, setup{script: &fake.Script{Responses: tc.script}, settings: tc.settings})
				defer e.s.Close()
				e.runPrompt(t, "hi")
				if n := e.rec.count("auto_retry_start"); n != tc.retries {
					t.Errorf("%d retries, want %d", n, tc.retries)
				}
				fb := eventsOf[events.ModelFallback](e.rec)
				if !tc.fellBack {
					if len(fb) != 0 || e.rec.count("model_changed") != 0 {
						t.Errorf("fell back: %+v", fb)
					}
				} else {
					if len(fb) != 1 || fb[0].From.ID != "echo" || fb[0].To.ID != "reasoning" || fb[0].Reason == "" {
						t.Fatalf("model_fallback %+v", fb)
					}
					var changed []string
					for _, mc := range eventsOf[events.ModelChanged](e.rec) {
						changed = append(changed, mc.Model.ID)
					}
					if !slices.Equal(changed, []string{"reasoning", "echo"}) {
						t.Errorf("model_changed %q, want the switch and the switch back", changed)
					}
					a := assistantEnds(e.rec)
					if last := a[len(a)-1]; last.Model != "reasoning" || last.Failed() {
						t.Errorf("final reply from %s (failed %v), want the fallback model", last.Model, last.Failed())
					}
					if st, _ := e.s.State(); st.Model.ID != "echo" {
						t.Errorf("session model %s after the fallback, want echo", st.Model.ID)
					}
				}
				if got := e.fp.Calls(); got != tc.calls {
					t.Errorf("%d model requests, want %d", got, tc.calls)
				}
			})
		})
	}
}

// TestAbortRetry pins Session.AbortRetry: it ends a pending retry wait,
// answers true before auto_retry_end, and the run ends with the failure.
func TestAbortRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, setup{script: &fake.Script{Responses: []fake.Response{fail("rate_limit"), reply("never")}}})
		defer e.s.Close()
		idleAnswer := make(chan bool, 1)
		e.s.AbortRetry(func(b bool) { idleAnswer <- b })
		if <-idleAnswer {
			t.Error("AbortRetry while idle answered true")
		}
		l := newReplyLog(e.rec)
		start := time.Now()
		e.s.Prompt("prompt", PromptInput{Message: "hi"}, l.fn("prompt"))
		synctest.Wait() // waiting before the retry
		if st, _ := e.s.State(); !st.IsRetrying {
			t.Fatal("not retrying")
		}
		got := make(chan bool, 1)
		e.s.AbortRetry(func(b bool) { e.rec.add(mark("abort_retry")); got <- b })
		waitIdle(t, e.s)
		if !<-got {
			t.Error("AbortRetry during the wait answered false")
		}
		if time.Since(start) != 0 {
			t.Errorf("the wait was not cut short: %v", time.Since(start))
		}
		ts := e.rec.types()
		if i, j := indexOf(ts, "mark:abort_retry", 0), indexOf(ts, "auto_retry_end", 0); i < 0 || j < i {
			t.Errorf("abort_retry is not answered before auto_retry_end: %s", joinTypes(ts))
		}
		if end := eventsOf[events.AutoRetryEnd](e.rec); len(end) != 1 || end[0].Success {
			t.Errorf("auto_retry_end %+v, want a failure", end)
		}
		if got := eventsOf[events.AgentEnd](e.rec); len(got) != 1 || got[0].StopReason != llm.StopError {
			t.Errorf("agent_end %+v", got)
		}
		if e.fp.Calls() != 1 {
			t.Errorf("%d requests, want 1 (no retry after abort_retry)", e.fp.Calls())
		}
	})
}

// TestOverflow pins Session.overflow: a context-overflow error compacts
// and retries once; with nothing to compact the failure stands and a
// notification says why.
func TestOverflow(t *testing.T) {
	t.Run("compacts and retries", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			e := newEnv(t, setup{settings: Settings{KeepRecentTokens: 1}, script: &fake.Script{Responses: []fake.Response{
				reply("one"), reply("two"), fail("overflow"), reply("## Summary\nearlier turns"), reply("three"),
			}}})
			defer e.s.Close()
			e.runPrompt(t, "first")
			e.runPrompt(t, "second")
			e.rec.reset()
			e.runPrompt(t, "third")
			cs, ce := eventsOf[events.CompactionStart](e.rec), eventsOf[events.CompactionEnd](e.rec)
			if len(cs) != 1 || cs[0].Trigger != TriggerOverflow || len(ce) != 1 || !ce[0].WillRetry || ce[0].Error != "" {
				t.Fatalf("compaction %+v %+v, want one overflow compaction that will retry", cs, ce)
			}
			if got := contextEdits(e.rec); !slices.Equal(got, []string{"overflow"}) {
				t.Errorf("context edits %q, want the overflowed attempt removed", got)
			}
			a := assistantEnds(e.rec)
			if last := a[len(a)-1]; last.Text("") != "three" {
				t.Errorf("final reply %q", last.Text(""))
			}
			if e.fp.Calls() != 5 {
				t.Errorf("%d requests, want 5", e.fp.Calls())
			}
		})
	})
	t.Run("first turn", func(t *testing.T) { // nothing precedes the turn: the whole context is summarised
		synctest.Test(t, func(t *testing.T) {
			e := newEnv(t, setup{script: &fake.Script{Responses: []fake.Response{
				fail("overflow"), reply("## Summary\nthe request"), reply("answer"),
			}}})
			defer e.s.Close()
			e.runPrompt(t, "first")
			cs := eventsOf[events.CompactionStart](e.rec)
			if len(cs) != 1 || cs[0].Trigger != TriggerOverflow {
				t.Fatalf("compaction %+v, want one overflow compaction", cs)
			}
			a := assistantEnds(e.rec)
			if last := a[len(a)-1]; last.Text("") != "answer" {
				t.Errorf("final reply %q", last.Text(""))
			}
			if n := eventsOf[events.Notification](e.rec); len(n) != 0 {
				t.Errorf("notifications %+v after a recovered overflow", n)
			}
		})
	})
	t.Run("auto compaction off", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			e := newEnv(t, setup{settings: Settings{NoAutoCompaction: true}, script: &fake.Script{Responses: []fake.Response{fail("overflow")}}})
			defer e.s.Close()
			e.runPrompt(t, "first")
			if e.rec.count("compaction_start") != 0 || e.fp.Calls() != 1 {
				t.Errorf("overflow handled with auto compaction off: %s", joinTypes(e.rec.types()))
			}
			if n := eventsOf[events.Notification](e.rec); len(n) != 1 || n[0].Level != "error" {
				t.Errorf("notifications %+v, want the run's error", n)
			}
		})
	})
}

// TestNoModel pins requestSnapshot's failures: the turn fails with a
// message instead of a request.
func TestNoModel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := New(&Deps{Dirs: Dirs{Data: t.TempDir()}}, Options{Cwd: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		rec := &recorder{}
		s.Subscribe(rec.add)
		e := &env{s: s, rec: rec}
		if r := e.runPrompt(t, "hi"); r.d != Started {
			t.Fatalf("reply %v %v", r.d, r.err)
		}
		a := assistantEnds(rec)
		if len(a) != 1 || a[0].StopReason != llm.StopError || !strings.Contains(a[0].ErrorMessage, "set_model") {
			t.Errorf("assistant %+v, want a failed turn naming set_model", a)
		}
		if !errors.Is(func() error { _, err := s.SetModel("fake", "echo"); return err }(), llm.ErrProviderNotFound) {
			t.Error("SetModel of an unknown provider did not fail with ErrProviderNotFound")
		}
	})
}
