// Package templates discovers prompt templates (<dir>/<name>.md files
// whose name becomes a slash command) and expands a prompt "/name args"
// into the file's body with shell-style argument placeholders ($1, $@,
// ${2:-default}, ${@:2}, …).
//
// Discovery reads the given directories once (first definition of a name
// wins) and returns warnings for the files it skips; the body is read
// again at each expansion, so edits apply without a restart. Project
// files are read through ownfs.ReadIn (a link may not leave the project
// nor reach a credential file), user and profile files through
// ownfs.ReadUserIn (the user's links are followed, never to a
// credential file); every read is bounded by MaxFile.
//
// Concurrency: functions only, no state; Discover and Read do file I/O
// and return plain values. Safe for concurrent use. A leaf: it imports
// only internal/ownfs.
package templates
