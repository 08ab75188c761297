// Package i18n is ama-rpc's interface language: the two languages (en, zh),
// the resolution order of the language (AMA_LANG > --lang > profile >
// ui.language > LC_ALL/LC_MESSAGES/LANG > en) and the message catalog of
// the texts meant for people (CLI usage errors and --help headings, fixed
// texts of error responses). Text sent to the model never comes from here:
// golden/arch_test.go lets only the protocol and composition layers (app,
// rpc, rpc/internal/wirecode) import this package, so tools, session and
// llm cannot reach the catalog and model requests stay byte-identical in
// every language.
//
// The package is a pure leaf: immutable tables and pure functions, safe
// for concurrent use. The language is chosen once per process (app) and
// passed down explicitly; nothing here holds a current language.
package i18n
