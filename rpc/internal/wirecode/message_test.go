package wirecode

import (
	"fmt"
	"testing"

	"github.com/armadra/ama-rpc/internal/i18n"
	"github.com/armadra/ama-rpc/session"
)

// The English catalog text of a row is the sentinel's own text, so the
// English wire is unchanged by the catalog.
func TestRowMessagesMatchSentinels(t *testing.T) {
	n := 0
	for _, r := range table {
		if r.msg == "" {
			continue
		}
		n++
		if got := i18n.T(i18n.En, r.msg); got != r.err.Error() {
			t.Errorf("%s: English %q, sentinel %q", r.msg, got, r.err.Error())
		}
		if Message(r.err, i18n.Zh) == r.err.Error() {
			t.Errorf("%s: not translated in zh", r.msg)
		}
	}
	if n == 0 {
		t.Fatal("no row has a message")
	}
}

func TestMessage(t *testing.T) {
	unknown := Localized(ErrNativeParams, i18n.RPCUnknownCommand, "no_such")
	for _, tc := range []struct {
		name   string
		err    error
		en, zh string
	}{
		{"localized", unknown, "unknown command: no_such", "未知命令：no_such"},
		{"bare sentinel", session.ErrBusy, "session is busy", "会话正忙"},
		{"wrapped sentinel keeps its detail untranslated", fmt.Errorf("%w: model said X", session.ErrBusy), "session is busy: model said X", "session is busy: model said X"},
		{"wrapped localized keeps the outer text", fmt.Errorf("ctx: %w", unknown), "ctx: unknown command: no_such", "ctx: unknown command: no_such"},
		{"plain error", fmt.Errorf("boom"), "boom", "boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Message(tc.err, i18n.En); got != tc.en {
				t.Errorf("en %q, want %q", got, tc.en)
			}
			if got := Message(tc.err, i18n.Zh); got != tc.zh {
				t.Errorf("zh %q, want %q", got, tc.zh)
			}
		})
	}
	if Native(unknown) != InvalidArguments {
		t.Errorf("code %q", Native(unknown))
	}
}
