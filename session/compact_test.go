package session

// Compaction: what planCompaction keeps, the manual command
// (compactCommand), the threshold decision of autoCompact and the
// context_pressure reports of checkPressure.

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/llm/fake"
)

// compactNow runs a manual compaction and waits for its reply.
func compactNow(t *testing.T, e *env, upTo string) (CompactionResult, error) {
	t.Helper()
	type res struct {
		r   CompactionResult
		err error
	}
	ch := make(chan res, 1)
	cb := func(r CompactionResult, err error) { ch <- res{r, err} }
	if upTo == "" {
		e.s.Compact("keep the file names", cb)
	} else {
		e.s.SummarizeUpTo(upTo, "", cb)
	}
	waitIdle(t, e.s)
	r := <-ch
	return r.r, r.err
}

// TestCompactNothingToDo pins the no-op: a manual compaction of an empty
// context succeeds with unchanged numbers and makes no request; a short
// context is compacted (cut points split turns) and never grows.
func TestCompactNothingToDo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, setup{settings: Settings{KeepRecentTokens: 1}})
		defer e.s.Close()
		res, err := compactNow(t, e, "")
		if err != nil {
			t.Fatalf("Compact = %v, want a no-op success", err)
		}
		if res.Summary != "" || res.TokensAfter == nil || *res.TokensAfter != res.TokensBefore {
			t.Errorf("no-op result %+v, want an empty summary and tokensAfter == tokensBefore", res)
		}
		if e.fp.Calls() != 0 || e.rec.count("compaction_start") != 0 {
			t.Error("a compaction request was made with nothing to compact")
		}
	})
	for _, tc := range []struct {
		name    string
		prompts int
		keep    int
	}{
		{"one turn", 1, 1},
		{"everything fits the recent budget", 2, 0}, // default budget: 20000 tokens
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, setup{settings: Settings{KeepRecentTokens: tc.keep}})
				defer e.s.Close()
				for range tc.prompts {
					e.runPrompt(t, "hello")
				}
				res, err := compactNow(t, e, "")
				if err != nil {
					t.Fatalf("Compact = %v", err)
				}
				if res.TokensAfter != nil && *res.TokensAfter > res.TokensBefore {
					t.Errorf("tokensAfter %d > tokensBefore %d", *res.TokensAfter, res.TokensBefore)
				}
			})
		})
	}
}

func TestCompactManual(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, setup{settings: Settings{KeepRecentTokens: 1}})
		defer e.s.Close()
		e.runPrompt(t, "first")
		e.runPrompt(t, "second")
		pts, _ := e.s.RewindPoints()
		if len(pts) != 2 {
			t.Fatalf("%d rewind points, want 2", len(pts))
		}
		e.rec.reset()
		res, err := compactNow(t, e, "")
		if err != nil {
			t.Fatal(err)
		}
		if res.FirstKeptEntryID < pts[1].EntryID { // test ids are ordered hex
			t.Errorf("first kept entry %s precedes the last turn's user entry %s", res.FirstKeptEntryID, pts[1].EntryID)
		}
		if res.Summary == "" || res.TokensAfter == nil || res.Usage == nil || res.TokensBefore <= 0 {
			t.Errorf("result %+v", res)
		}
		cs, ce := eventsOf[events.CompactionStart](e.rec), eventsOf[events.CompactionEnd](e.rec)
		if len(cs) != 1 || cs[0].Trigger != TriggerManual || len(ce) != 1 || ce[0].Result == nil || ce[0].WillRetry || ce[0].Aborted {
			t.Errorf("compaction events %+v %+v", cs, ce)
		}
		msgs, _ := e.s.Messages()
		users := 0
		for _, m := range msgs {
			if u, ok := m.(*llm.UserMessage); ok && u.Content.PlainText() == "first" {
				users++
			}
		}
		if users != 0 {
			t.Error("the compacted turn is still in the context")
		}
		if st, _ := e.s.State(); st.IsCompacting || st.IsStreaming {
			t.Errorf("state after compaction %+v", st)
		}
	})
}

func TestSummarizeUpToUnknownEntry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, setup{})
		defer e.s.Close()
		e.runPrompt(t, "first")
		if _, err := compactNow(t, e, "nope"); !errors.Is(err, ErrInvalidArguments) {
			t.Errorf("SummarizeUpTo(nope) = %v, want ErrInvalidArguments", err)
		}
	})
}

// TestCompactExcludesRuns pins compactCommand and state.prompt: a
// compaction needs an idle session, and a prompt during one is busy.
func TestCompactExcludesRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, setup{settings: Settings{KeepRecentTokens: 1}, script: &fake.Script{Responses: []fake.Response{
			reply("one"), reply("two"), slow(time.Hour), slow(time.Hour),
		}}})
		defer e.s.Close()
		e.runPrompt(t, "first")
		e.runPrompt(t, "second")
		done := make(chan error, 1)
		e.s.Compact("", func(_ CompactionResult, err error) { done <- err })
		synctest.Wait() // the summary request is streaming
		if st, _ := e.s.State(); !st.IsCompacting || st.IsStreaming {
			t.Errorf("state during compaction %+v", st)
		}
		l := newReplyLog(e.rec)
		e.s.Prompt("prompt", PromptInput{Message: "third"}, l.fn("p"))
		e.s.Prompt("prompt", PromptInput{Message: "x", StreamingBehavior: "steer"}, l.fn("steer"))
		synctest.Wait()
		for range 2 {
			if r := l.next(t); !errors.Is(r.err, ErrBusy) {
				t.Errorf("%s during a compaction: %v %v, want ErrBusy", r.name, r.d, r.err)
			}
		}
		second := make(chan error, 1)
		e.s.Compact("", func(_ CompactionResult, err error) { second <- err })
		synctest.Wait()
		if err := <-second; !errors.Is(err, ErrBusy) {
			t.Errorf("a second compaction: %v, want ErrBusy", err)
		}
		// Abort ends the compaction; the reply says why.
		aborted := make(chan struct{})
		e.s.Abort(func() { close(aborted) })
		<-aborted
		if err := <-done; err == nil {
			t.Error("an aborted compaction reported success")
		}
		if ce := eventsOf[events.CompactionEnd](e.rec); len(ce) != 1 || !ce[0].Aborted {
			t.Errorf("compaction_end %+v, want aborted", ce)
		}
	})
}

// TestAutoCompaction pins autoCompact and checkPressure on a model with a
// small context window: a reply that fills 90 % of it reports
// context_pressure, and the next request is preceded by a threshold
// compaction (unless auto-compaction is off).
func TestAutoCompaction(t *testing.T) {
	tiny := &llm.Model{Provider: fake.ProviderID, ID: "tiny", API: "fake", ContextWindow: 10000, MaxTokens: 100}
	full := fake.Response{Text: text("a"), Usage: &fake.UsageSpec{Input: intp(9000), Output: intp(10)}}
	for _, tc := range []struct {
		name        string
		settings    Settings
		compactions int
	}{
		{"on", Settings{KeepRecentTokens: 1}, 1},
		{"off", Settings{KeepRecentTokens: 1, NoAutoCompaction: true}, 0},
		{"threshold above the use", Settings{KeepRecentTokens: 1, CompactionPercent: 95}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, setup{settings: tc.settings, models: []*llm.Model{tiny},
					script: &fake.Script{Responses: []fake.Response{full, reply("## Summary\nx"), reply("b"), reply("c")}}})
				defer e.s.Close()
				if _, err := e.s.SetModel(fake.ProviderID, "tiny"); err != nil {
					t.Fatal(err)
				}
				e.runPrompt(t, "first")
				cp := eventsOf[events.ContextPressure](e.rec)
				// A jump from 0 past both thresholds reports each (issue 18,
				// spec A.7), with the percent rounded to one decimal.
				if len(cp) != 2 || cp[0].Threshold != 70 || cp[1].Threshold != 90 || cp[1].Percent != 90.1 {
					t.Errorf("context_pressure %+v, want reports at 70 and 90 %%", cp)
				}
				e.rec.reset()
				e.runPrompt(t, "second")
				cs := eventsOf[events.CompactionStart](e.rec)
				if len(cs) != tc.compactions || tc.compactions == 1 && cs[0].Trigger != TriggerThreshold {
					t.Fatalf("compaction_start %+v, want %d threshold compactions", cs, tc.compactions)
				}
				if tc.compactions == 1 {
					ts := e.rec.types()
					if indexOf(ts, "compaction_end", 0) > indexOf(ts, "message_update", 0) {
						t.Errorf("the compaction does not precede the turn's request: %s", joinTypes(ts))
					}
				}
			})
		})
	}
}
