// Package checkpoint keeps what files held before the agent changed them,
// so that "rewind code" can put them back. It knows nothing about sessions
// or the wire: the session layer owns the rewind commands, the
// ama.checkpoint / ama.checkpoint-track entries, the conversation part and
// the rewind note, and uses this package for the file side.
//
// # Recording
//
// A turn starts at a user message (its entry id is the checkpoint id). The
// session creates a Turn for it and hands Turn.BeforeChange to the tools
// (tools.Env.BeforeChange): write and edit call it for their target, bash
// for the write/delete targets its command analysis finds. The first call
// for a path in the turn takes a Snapshot: a regular file's bytes go into
// the Store, and a Record describes the path (see Record for the fields;
// the JSON matches §5.6 files:{<path>:{blob|null,mode?,size?,realParentDir?,
// skipped?}} plus "after"). When first is true the session appends an
// ama.checkpoint-track entry {v:1,userEntryId,path:Key,record}. Symlinks,
// hard-linked files and anything not a regular file are recorded as
// skipped, never followed or read; so are files above the size cap
// (NewStore, DefaultMaxFileBytes = 5 MiB as in the reference). Directories
// are not recursed: `rm -r dir` records dir as not_regular.
//
// After each tool (or once when the turn ends) the session calls
// Turn.After for the paths it touched; Turn.Files then carries, in
// Record.After, what the agent left: the SHA-256 of the content (of any
// size) or "absent". After lives in memory until the session persists
// Files (e.g. in a later track entry); a record without After simply never
// conflicts.
//
// # Blobs
//
// Store keeps content under <dir>/blobs/<hash[:2]>/<hash> (pass
// <dataDir>/file-history to match the reference layout), named by the
// lowercase hex SHA-256, mode 0600 in 0700 directories, written to a
// temporary file and renamed so a blob is never seen half-written, stored
// once per content. Blobs are not fsynced; Get re-hashes and treats a torn
// blob as ErrBlobMissing. Nothing is ever deleted here (clean-up of
// unreferenced blobs is left to a future GC, which is why Put refreshes the
// mtime of a blob it reuses).
//
// # Restoring
//
// Store.Restore takes Union(turn files from the rewind point to the end):
// the earliest record per path is the state before the rewind point, the
// latest After is what the agent last left. It returns the protocol's
// CodeRestoreResult as Result. Decisions:
//
//   - Conflict = the current state (hash or absent) differs from After:
//     someone else changed the file after the agent. With OnConflict
//     "skip" (default) the file is listed only in Conflicts and left
//     untouched; with "overwrite" it is restored anyway and listed in
//     Conflicts and in Restored/Deleted. A file already in its recorded
//     state is never a conflict and is not listed at all.
//   - Files are written atomically (temporary file in the same directory,
//     fsync, rename) with the recorded mode, inside the parent directory
//     opened as an os.Root after checking it still resolves to
//     RealParentDir; deletes use the same directory handle. Neither
//     follows a symlink. Missing parent directories are recreated;
//     directories a turn created are not removed.
//   - Skip reasons, in order: the record's own Skipped; symlink /
//     not_regular for what is at the path now; conflict (above); hardlink;
//     parent_moved; backup_missing. Other errors are Failed, per file;
//     Result.AllFailed is the rewind_failed condition.
//   - Insertions/Deletions: a line diff (go-udiff) from the current content
//     to the restored one, summed over Restored and Deleted; 0 for a
//     current file above the size cap.
//   - DryRun runs every check and count and changes nothing; its Result is
//     the real run's, except for errors only writing can reveal.
//   - Paths are Keys: relative to cwd with '/' inside it, absolute outside,
//     sorted; JSON arrays are never null.
//
// # Concurrency
//
// Store has no mutable state and is safe for concurrent use (also across
// processes sharing the directory). Turn is safe for concurrent use: tools
// running in parallel may call BeforeChange, After and Files at the same
// time; concurrent BeforeChange calls for one path all return after its
// single snapshot is complete, so no tool changes a file before it is
// recorded. Restore handles files one at a time and must not run while
// tools change files (the session rejects rewinds while busy). No
// goroutines are started.
package checkpoint
