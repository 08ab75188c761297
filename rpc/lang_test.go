package rpc

import (
	"testing"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/internal/i18n"
)

func TestLocalizeNotification(t *testing.T) {
	n := events.Notification{Level: "warn", Message: "automatic compaction failed: boom", Key: string(i18n.NoticeCompactFailed), Args: []any{"boom"}}
	if got := localize(n, i18n.Zh).(events.Notification).Message; got != "自动压缩失败：boom" {
		t.Errorf("zh: %q", got)
	}
	if got := localize(n, i18n.En).(events.Notification).Message; got != n.Message {
		t.Errorf("en: %q", got)
	}
	stale := n
	stale.Message = "compaction went wrong: boom" // the composer's sentence changed, the catalog did not
	if got := localize(stale, i18n.Zh).(events.Notification).Message; got != stale.Message {
		t.Errorf("stale sentence replaced: %q", got)
	}
	plain := events.Notification{Level: "warn", Message: "host says hi"}
	if got := localize(plain, i18n.Zh).(events.Notification).Message; got != plain.Message {
		t.Errorf("keyless notification changed: %q", got)
	}
	line, err := encodeEvent(localize(n, i18n.Zh))
	if err != nil || string(line) != `{"type":"notification","level":"warn","message":"自动压缩失败：boom"}`+"\n" {
		t.Errorf("encoded %s %v", line, err)
	}
}
