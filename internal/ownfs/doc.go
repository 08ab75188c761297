// Package ownfs owns every file ama-rpc opens on its own account: config,
// hooks, auth and profile files, project context files (AGENTS.md,
// CLAUDE.md, skills, .ama/*), background job logs, cut tool outputs, task
// reports, plan files and other working files. ama-rpc runs outside the
// sandbox with the user's rights, and many of these paths sit where a
// sandboxed command or the model can plant a link or swap a file (the
// confused deputy of threat-model.md); this package is the one rule for
// them, and golden/arch_test.go keeps it the only way in.
//
// The rules:
//   - Reads take regular files only (a FIFO, device or socket is refused
//     before any byte is read, so nothing blocks), bounded in size.
//   - A file under a root (ReadIn, the project's context files) is opened
//     through os.Root: a link inside the root is followed, one that leaves
//     it is refused; the file it reaches must not be a credential path
//     (internal/secrets) and must not have a second hard link (a hard link
//     can be a copy of a secret that no path check sees).
//   - New files (CreateTemp, CreateNew) are created with O_CREAT|O_EXCL
//     inside a directory opened as an os.Root whose last component may not
//     lead out of its parent, so a planted link is never written through.
//   - Replacements (WriteAtomic) go to a fresh temporary file in the same
//     directory and are renamed over the name: a link planted at the name
//     is replaced, not followed.
//   - The directory a new or replaced file goes into may not belong to
//     another user (ErrNotOwned: one who made $TMPDIR/ama-outputs first
//     could read, replace or remove what ama-rpc writes there); the user's
//     own and root's pass.
//   - A file ama-rpc keeps (a job log) is read back through the descriptor
//     it created, never by path.
//
// User files (ReadUser: the user's config directory, profiles, files the
// user names in config) follow links, which are the user's own (dotfile
// managers), but are still regular-only and bounded. ReadUserIn, for user
// files whose content goes to the model (prompt templates), also refuses
// a link that leaves their directory for a credential path.
//
// Functions only, no state: safe for concurrent use. A leaf that imports
// only the standard library and internal/secrets.
package ownfs
