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
