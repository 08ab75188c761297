package wirecode

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/session"
	"github.com/armadra/ama-rpc/store"
)

// Every row gives its error a code on at least one wire (ErrParse is the
// one error that is answered without a code).
func TestEveryRowHasACode(t *testing.T) {
	for _, r := range table {
		if r.native == "" && r.acp == 0 && r.err != ErrParse {
			t.Errorf("row %v/%q has no code", r.err, r.kind)
		}
	}
}

func TestBothWires(t *testing.T) {
	cases := []struct {
		err    error
		native string
		acp    int64
	}{
		{fmt.Errorf("x: %w", session.ErrBusy), Busy, InternalError},
		{fmt.Errorf("x: %w", store.ErrNotFound), SessionNotFound, ResourceNotFound},
		{fmt.Errorf("x: %w", llm.ErrInvalidConfig), InvalidArguments, InvalidParams},
		{Errorf(ErrNativeParams, "bad"), InvalidArguments, InternalError},
		{Errorf(ErrACPParams, "bad"), "", InvalidParams},
		{ErrACPParse, "", ParseError},
		{ErrACPRequest, "", InvalidRequest},
		{Errorf(ErrParse, "JSON parse failed"), "", InternalError},
		{&llm.Error{Kind: llm.ErrNoKey}, NoAPIKey, AuthRequired},
		{&llm.Error{Kind: llm.ErrAborted}, Aborted, InternalError},
		{context.Canceled, "", InternalError}, // not a provider failure
		{errors.New("boom"), "", InternalError},
	}
	for _, c := range cases {
		if got := Native(c.err); got != c.native {
			t.Errorf("Native(%v) = %q, want %q", c.err, got, c.native)
		}
		code, native := ACP(c.err)
		if code != c.acp || native != c.native {
			t.Errorf("ACP(%v) = %d, %q; want %d, %q", c.err, code, native, c.acp, c.native)
		}
	}
}
