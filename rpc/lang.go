package rpc

import (
	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/internal/i18n"
)

// localize renders a notification that names its catalog sentence
// (events.Notification.Key) in lang. The English text stays the
// composer's: when the catalog's English does not render to exactly
// Message (the sentence changed on one side), the text is left as composed
// rather than replaced by a stale translation.
func localize(e events.Event, lang i18n.Lang) events.Event {
	n, ok := e.(events.Notification)
	if !ok || n.Key == "" || lang == "" || lang == i18n.En {
		return e
	}
	key := i18n.Key(n.Key)
	if i18n.T(i18n.En, key, n.Args...) != n.Message {
		return e
	}
	n.Message = i18n.T(lang, key, n.Args...)
	return n
}

// sessionText renders a text the session composed in English from the
// catalog sentence key (with args) in lang. As for notifications, a key
// whose English no longer renders to exactly english leaves the text as
// composed.
func sessionText(key, english string, lang i18n.Lang, args ...any) string {
	if key == "" || lang == "" || lang == i18n.En || i18n.T(i18n.En, i18n.Key(key), args...) != english {
		return english
	}
	return i18n.T(lang, i18n.Key(key), args...)
}
