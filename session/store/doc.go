// Package store reads and writes ama session files: a JSONL header line
// followed by entries that form a tree (id/parentId), plus leaf lines that
// move the active branch.
//
// Concurrency: a File is owned by one goroutine (the session actor); it is
// not safe for concurrent use. Entries are immutable once appended and may
// be shared freely. The package never writes to stdout.
package store
