package session

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/store"
)

// maxRetryDelay caps a single wait, whatever Retry-After says.
const maxRetryDelay = 60 * time.Second

// modelChoice is a model to use for one request instead of the session's.
type modelChoice struct {
	model *llm.Model
	entry *llm.ProviderEntry
}

// reply streams one assistant message and records it. Transient failures
// (rate limits, overload, server and network errors, a stream cut
// mid-reply) are retried with exponential backoff, honouring Retry-After:
// each failed attempt is removed from the context with a context_edit,
// and auto_retry_start / auto_retry_end frame the retries. When retries
// are exhausted (or the endpoint is overloaded) and a fallback model is
// configured, one more attempt uses it. The returned message is final.
func (s *Session) reply(r *runState, pending []input) turnReply {
	set := s.deps.Settings
	tr := s.replyOnce(r, 1, nil, &turnStart{pending: pending})
	if tr.closed {
		return tr
	}
	if llm.KindOf(tr.err) == llm.ErrOverflow {
		tr = s.overflow(r, tr)
	}
	attempt, retried, stopped := 1, false, false
	for retryable(tr) && r.ctx.Err() == nil {
		on, err := call(s, func(st *state) bool { return st.autoRetry })
		if err != nil || !on || attempt > set.MaxRetries || (overloaded(tr) && set.FallbackModel.Provider != "") {
			break
		}
		delay := set.RetryBaseDelay << (attempt - 1)
		var le *llm.Error
		if errors.As(tr.err, &le) && le.RetryAfter > delay {
			delay = le.RetryAfter
		}
		delay = min(delay, maxRetryDelay)
		wait, cancel := context.WithCancel(r.ctx)
		_ = s.do(func(st *state) {
			st.forgetFailed(tr)
			if st.run != nil {
				st.run.retrying, st.run.cancelRetry = true, cancel
			}
			s.publish(events.AutoRetryStart{Attempt: attempt, MaxAttempts: set.MaxRetries, DelayMs: delay.Milliseconds(), ErrorMessage: tr.msg.ErrorMessage})
			s.notify("retry", fmt.Sprintf("retry %d/%d: %s", attempt, set.MaxRetries, tr.msg.ErrorMessage))
		})
		retried = true
		slept := set.Sleep(wait, delay)
		cancel()
		_ = s.do(func(st *state) {
			if st.run != nil {
				st.run.retrying, st.run.cancelRetry = false, nil
				for _, f := range st.run.retryAborted {
					f(true)
				}
				st.run.retryAborted = nil
			}
		})
		if slept != nil { // abort or abort_retry: the run ends with this failure
			stopped = true
			break
		}
		attempt++
		tr = s.replyOnce(r, attempt, nil, nil)
	}
	if retried {
		end := events.AutoRetryEnd{Success: !tr.msg.Failed(), Attempt: attempt}
		if tr.msg.Failed() {
			end.FinalError = tr.msg.ErrorMessage
		}
		s.publish(end)
	}
	if retryable(tr) && r.ctx.Err() == nil && !stopped {
		tr = s.fallback(r, tr, attempt+1)
	}
	return tr
}

// overflow handles a context-overflow error: with auto-compaction on, the
// failed attempt leaves the context, the context is compacted and the
// request is retried once.
func (s *Session) overflow(r *runState, failed turnReply) turnReply {
	on, err := call(s, func(st *state) bool { return st.autoCompaction })
	if err != nil || !on {
		return failed
	}
	_ = s.do(func(st *state) {
		if failed.entryID != "" {
			st.appendEntry(store.ContextEditEntry(failed.entryID, nil, "overflow"))
		}
	})
	if _, err := s.compact(r, TriggerOverflow, "", "", true); err != nil {
		s.publish(events.Notification{Level: "error", Message: "the context is too long and could not be compacted: " + err.Error(),
			Key: "notice.contextTooLong", Args: []any{err.Error()}})
		return failed
	}
	return s.replyOnce(r, 2, nil, nil)
}

// fallback retries once with the configured fallback model, announcing
// the switch and the switch back.
func (s *Session) fallback(r *runState, failed turnReply, attempt int) turnReply {
	ref := s.deps.Settings.FallbackModel
	if ref.Provider == "" {
		return failed
	}
	m, entry, err := s.deps.Models.Find(ref.Provider, ref.ID)
	if err != nil || !entry.HasKey {
		s.log.Warn("fallback model not usable")
		return failed
	}
	from, err := call(s, func(st *state) *llm.ModelRef {
		if st.model == nil || (st.model.Provider == m.Provider && st.model.ID == m.ID) {
			return nil
		}
		st.forgetFailed(failed)
		return modelRef(st.model)
	})
	if err != nil || from == nil {
		return failed
	}
	to := *modelRef(m)
	s.publish(events.ModelFallback{From: *from, To: to, Reason: failed.msg.ErrorMessage})
	s.publish(events.ModelChanged{Model: to})
	tr := s.replyOnce(r, attempt, &modelChoice{model: m, entry: entry}, nil)
	s.publish(events.ModelChanged{Model: *from})
	return tr
}

// forgetFailed removes a failed attempt from the model context (it stays
// in the file and the transcript).
func (st *state) forgetFailed(tr turnReply) {
	if tr.entryID != "" {
		st.appendEntry(store.ContextEditEntry(tr.entryID, nil, "retry"))
	}
}

// retryable reports whether the reply failed in a way a retry may fix.
func retryable(tr turnReply) bool {
	if tr.msg == nil || tr.msg.StopReason != llm.StopError {
		return false
	}
	var le *llm.Error
	return errors.As(tr.err, &le) && le.Retryable()
}

func overloaded(tr turnReply) bool { return llm.KindOf(tr.err) == llm.ErrOverloaded }

// AbortRetry cancels a pending retry wait; the run then ends with the last
// failure. reply says whether a retry was pending; when it was, it is
// called once the wait has ended (before auto_retry_end).
func (s *Session) AbortRetry(reply func(aborted bool)) {
	if !s.post(func(st *state) {
		if st.run == nil || !st.run.retrying || st.run.cancelRetry == nil {
			reply(false)
			return
		}
		st.run.retryAborted = append(st.run.retryAborted, reply)
		st.run.cancelRetry()
	}) {
		reply(false)
	}
}
