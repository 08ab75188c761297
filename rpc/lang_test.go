package rpc

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
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

// Every catalog key a session names in a notification exists in both
// languages (the session holds the key as a string, so neither the
// compiler nor TestCatalogComplete sees a missing one).
func TestNotificationKeysInCatalog(t *testing.T) {
	files, err := filepath.Glob("../session/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("session sources: %v", err)
	}
	keyLit := regexp.MustCompile(`"((?:notice|command)\.[a-zA-Z.]+)"`)
	found := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range keyLit.FindAllStringSubmatch(string(src), -1) {
			for _, k := range m[1:] {
				if k != "" {
					found[k] = true
				}
			}
		}
	}
	for _, want := range []string{"notice.compactFailed", "notice.contextTooLong", "notice.checkpointFailed",
		"notice.sessionFile.writeFailed", "notice.sessionFile.rewritten", "notice.decisionLog.asked", "notice.decisionLog.unlogged",
		"command.builtin.model", "command.builtin.name"} {
		if !found[want] {
			t.Errorf("the session no longer names %s (update this list)", want)
		}
	}
	for k := range found {
		for _, l := range i18n.Langs {
			if !i18n.Has(l, i18n.Key(k)) {
				t.Errorf("session names %s, which the %s catalog lacks", k, l)
			}
		}
	}
}

func TestSessionText(t *testing.T) {
	const en = "Name this session: /name <text>"
	if got := sessionText(string(i18n.CommandName), en, i18n.Zh); got != "给本会话命名：/name <文字>" {
		t.Errorf("zh: %q", got)
	}
	if got := sessionText(string(i18n.CommandName), en, i18n.En); got != en {
		t.Errorf("en: %q", got)
	}
	if got := sessionText(string(i18n.CommandName), "Name it", i18n.Zh); got != "Name it" {
		t.Errorf("a stale English text was replaced: %q", got)
	}
	if got := sessionText("", en, i18n.Zh); got != en {
		t.Errorf("no key: %q", got)
	}
}
