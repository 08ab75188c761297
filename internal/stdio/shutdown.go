package stdio

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"
)

// ErrInterrupted is returned by Finish (and so by both servers' Run) when
// ctx ended (a signal) rather than the input.
var ErrInterrupted = errors.New("interrupted")

// DefaultShutdownGrace bounds the orderly shutdown after a signal: if
// output cannot be flushed by then (the host stopped reading), the server
// returns anyway.
const DefaultShutdownGrace = 5 * time.Second

// Finish is the end of a server's Run, the same for every protocol: it
// waits for done, which the protocol closes when its orderly shutdown
// (withdraw asks, finish or abort runs, write owed replies, flush, close
// sessions) is over, then closes w.
//
// When ctx ends first (a signal, also one that comes during a shutdown
// already under way), abort is called once (the protocol aborts its runs
// right away: the shutdown may be blocked behind them) and the wait is
// bounded by grace (zero: DefaultShutdownGrace). If that runs out, the
// host stopped reading: w is abandoned, so whoever waits for room in its
// queue returns and the aborted runs can end, the sessions get a fifth of
// the grace more to close, and Finish returns without closing w (its
// goroutine may be stuck in a write).
//
// Finish returns ErrInterrupted when ctx ended, nil otherwise.
func Finish(ctx context.Context, w *Writer, log *zap.Logger, grace time.Duration, done <-chan struct{}, abort func()) error {
	if grace <= 0 {
		grace = DefaultShutdownGrace
	}
	select {
	case <-done:
	case <-ctx.Done():
		abort()
		select {
		case <-done:
		case <-time.After(grace):
			log.Warn("shutdown did not finish in time; exiting without flushing output")
			w.Abandon()
			select {
			case <-done:
			case <-time.After(grace / 5):
				log.Warn("the sessions did not close after the output was abandoned")
			}
			return ErrInterrupted
		}
	}
	w.Close()
	if ctx.Err() != nil {
		return ErrInterrupted
	}
	return nil
}
