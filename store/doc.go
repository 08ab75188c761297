// Package store reads and writes ama session files (protocol spec §5): a
// JSONL header line followed by entries that form a tree (id/parentId),
// plus leaf lines that move the active branch.
//
// # Pieces
//
//   - Reading: ReadSnapshot (read-only: no lock, no repair), Open (lock +
//     repair, returns a *File for appending), ReadInfo/List/ListAll (the
//     picker; streams, keeps no entries) and ReadHeader (the header line
//     alone: a session's id before it is opened). All apply the same rules (§5.3):
//     lines end at '\n' only, one trailing '\r' is dropped, lines that are
//     blank after JavaScript trim are skipped, an unparsable last line
//     without final LF is a half-written tail (ignored; Open truncates it),
//     an unparsable line anywhere else is corrupt. A corrupt file is never
//     modified.
//   - Writing: Create (mode 0600, dirs 0700; a new session's small file
//     in place with O_EXCL, a large one such as a fork written without a
//     name (O_TMPFILE), fsynced, linked into place and fsynced again for
//     its link count (elsewhere a temp file, renamed); both durable, with
//     their names, before Create returns: a new small file's two fsyncs
//     run at once, the directory's on a goroutine that ends before Create
//     returns; a linked file's directory is fsynced only where the file's
//     fsync does not write it, which ext4 does (writeAnon)), then
//     File.Append / File.AppendLeaf (one write per call, a huge body in
//     its own write; O_APPEND) and
//     File.Close (releases the lock). See File for the fsync policy.
//     Entries of at least 1 MiB (SpillBytes) leave the heap once written,
//     and when a file is opened (spill.go). Before each append the file
//     is checked to be the one written, at the size written
//     (ErrFileChanged; File.Rewrite puts it back from memory).
//   - Locking: <file>.lock with the owner's pid (§5.1); stale locks are taken
//     over. While the process holds a lock, a new one is made as one more
//     name of that lock's file (link(2), which fails on a taken name as
//     O_EXCL does; lock.go): every lock of a process holds the same pid,
//     and a new inode is the dearest part of a lock on ext4 without a
//     journal.
//   - Tree: the in-memory index (branch, children, labels, since, get_tree
//     nodes), ForkEntries/Fork, ForkPath (a fork's path; a chain forked at
//     its last entry gets the tree copied, id index and all, instead of one
//     built again: NewPathTree), and Project, the model-context projection of
//     a branch. Projection is the same projection planned without decoding
//     messages (they are decoded on demand) and extended by Append, so a
//     session projects its branch once and keeps it; BranchSettings reads
//     the latest model and thinking level from their own entries.
//
// # Errors
//
// Errors wrap the sentinels ErrNotFound, ErrCorrupt (always a
// *CorruptError with the file, line and reason ama reports), ErrLocked,
// ErrExists, ErrClosed, ErrUnknownEntry and ErrMalformedEntry; the rpc layer
// maps them to session_not_found, session_corrupt, session_locked and
// session_exists.
//
// # Performance
//
// Opening validates every line with a single-pass scanner
// (jsonobj.Scanner) that also finds the top-level members, so the reserved keys (type, id, parentId,
// timestamp) are split off without decoding the body; bodies are copied
// into large shared chunks and message bodies are decoded only on demand
// (Entry.Message, Project), then cached. The role of a message (and, for
// a user message, its origin: origin.go), the customType of a custom
// entry, a label's target and text and the session name are read once
// when the entry is made (Entry.learn), while its body is in the cache,
// when the body has the shape this package writes; later questions do not
// touch the body. So the commands that look for a few messages on a long
// branch decode only those: rewind finds its point on the tail of the
// branch (Tree.Tail, TurnStarts.Entry), get_trace, get_fork_messages and
// the rewind points skip every message that cannot be what they want
// (Entry.NotUser). What get_trace counts of a message it does not return
// (role, time, usage, tool-call ids: MessageFacts, msgfacts.go) is read
// while the line is validated: the scanner records (messageNests) the
// spans of the message object's members, of its content blocks, of its usage and of
// the usage's cost in the same pass, and a message made in memory takes
// them from the message itself.
// An entry records, when it is made, whether its line can be written
// from its stored bytes as they are (factTrim: the body's members need no
// trimming; factPlainHead: the type, id, parent and timestamp need no
// escaping, known from the scanner for a line read; factClean: the body
// is wire-clean, jsonstr.WireClean, free for an ASCII line as the
// scanner tells, Scanner.NonASCII): AppendJSON then copies the stored
// bytes (a created file, a fork, get_entries) and get_tree's
// NodesJSON.WriteVec hands them to the stdout writer as they are, in
// vectors (writev; a body of 16 KiB or more referenced in place, not
// copied), re-encoding only the entries that need it. get_tree's shape is
// Tree.NodesJSON: a copy of the tree's kidList (one int32 an entry for a
// chain), no Node per entry, and its walk takes no frame per chain node.
// AppendNodesJSON sizes its buffer once from the entries' encoded
// lengths; a created file is written through one reused buffer (up to
// 4 MB the one kept between Creates) in whole chunks of a power of two,
// so each write starts at a multiple of the chunk and the page cache
// takes it in large folios, and a
// body read from a line is not scanned again when a fork writes it. A file of at least 4 MiB is parsed in
// two halves at once (readSplit; a failing file is read again in one pass,
// so errors are those of the sequential read). The tree's id index is a
// flat table of 8-byte slots (idindex.go). A file of 100,000 entries opens in
// well under a second with a heap of about its own size plus ~150 bytes per
// entry (see BenchmarkOpen100k).
//
// # Concurrency
//
// A *File is safe for concurrent use; its methods are serialised by a
// mutex, and it is normally owned by the session actor. Snapshots and
// entries are immutable once returned or appended and may be shared
// freely between goroutines (an entry's decoded message is cached behind an
// atomic pointer; a huge text in it may be a string over the body's own
// bytes, see share.go, so a body must never be written to). The one change
// an entry sees after it is shared is spill.go's: once written, a huge
// body and its message's big text move from the heap to a read-only
// mapping of a sealed memory file (spill.go), swapped in atomically, the bytes
// unchanged, so a concurrent reader sees one copy or the other. A *Tree is not safe for concurrent use: it belongs to the
// goroutine that owns the session; the copy Tree.ForkPath makes shares
// nothing with its source but the (immutable) entries, so it may go to
// another goroutine. The package keeps three pieces of
// process-wide state, each guarded by a mutex: the set of locks this
// process holds (with each lock's file open, one of them the file the
// next lock links; see lock.go), the 80 KiB buffer Create writes
// lines through, kept between calls (file.go takeLineBuf: a Create takes
// it, or a new one while another Create has it, and gives it back), and
// whether each device seen is ext4 (newfile_linux.go syncsNewName, read
// once from /proc/self/mountinfo). The package starts two goroutines: the one
// that parses the second half of a large file while ReadSnapshot or Open
// parses the first, which shares nothing with its caller but the file (read
// with ReadAt) and is joined before they return, and the one that fsyncs a
// new small file's directory while Create fsyncs the file (syncNew), joined
// before Create returns. Nothing writes to stdout.
package store
