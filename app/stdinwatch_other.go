//go:build !linux

package app

import (
	"context"
	"errors"
	"io"
)

var errStdinEnded = errors.New("stdin ended during startup")

// stdinWatch only watches stdin on Linux (poll and FIONREAD); elsewhere
// the startup waits end by their deadlines.
type stdinWatch struct{ ctx context.Context }

func watchStdin(ctx context.Context, _ io.Reader) *stdinWatch { return &stdinWatch{ctx: ctx} }

func (w *stdinWatch) stop() {}
