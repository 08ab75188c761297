package store

import (
	"errors"
	"strconv"
)

// Sentinel errors. Every error returned by this package that has one of these
// meanings wraps it, so callers map them to wire codes with errors.Is.
var (
	// ErrNotFound: the session file does not exist or cannot be read
	// (wire code session_not_found).
	ErrNotFound = errors.New("session not found")
	// ErrCorrupt: the file violates the format (wire code session_corrupt).
	// The concrete error is a *CorruptError.
	ErrCorrupt = errors.New("session corrupt")
	// ErrLocked: another live writer holds <file>.lock (wire code
	// session_locked).
	ErrLocked = errors.New("session locked")
	// ErrExists: Create was asked to write over an existing file (wire code
	// session_exists).
	ErrExists = errors.New("session exists")
	// ErrClosed: the File was closed, or an earlier failed append could not
	// be rolled back and the file refuses further writes.
	ErrClosed = errors.New("session file closed")
	// ErrUnknownEntry: an entry id that is not in the session.
	ErrUnknownEntry = errors.New("no such session entry")
	// ErrWrite: the session file could not be written (disk full, I/O
	// error, permissions); nothing was left half written (wire code
	// session_write_failed).
	ErrWrite = errors.New("session file write failed")
	// ErrFileChanged: another process deleted, replaced, truncated or
	// appended to the session file while this File held it; nothing was
	// written (wire code session_file_changed). The concrete error is a
	// *ChangedError. File.Rewrite puts the file back.
	ErrFileChanged = errors.New("session file changed by another process")
)

// ChangedError says how the session file changed under a File.
type ChangedError struct {
	Path string
	What string // "deleted", "replaced", "truncated" or "appended to"
	Size int64  // size found (truncated, appended to)
	Want int64  // size this File wrote
}

func (e *ChangedError) Error() string {
	switch e.What {
	case "truncated", "appended to":
		return "session file " + e.Path + " was " + e.What + " by another process (" +
			strconv.FormatInt(e.Size, 10) + " bytes, expected " + strconv.FormatInt(e.Want, 10) + ")"
	}
	return "session file " + e.Path + " was " + e.What + " by another process"
}

// Is makes errors.Is(err, ErrFileChanged) true.
func (e *ChangedError) Is(target error) bool { return target == ErrFileChanged }

// Corruption reasons (CorruptError.Reason), worded like the reference.
const (
	ReasonInvalidJSON     = "invalid JSON line"
	ReasonMissingHeader   = "missing session header"
	ReasonMalformedHeader = "malformed session header"
	ReasonMalformedEntry  = "malformed entry"
	ReasonMalformedLeaf   = "malformed leaf line"
	ReasonDuplicateHeader = "duplicate session header"
	// ReasonUnsupportedVersion is the prefix of the version message; the full
	// reason is "unsupported session format version N (this ama reads version 1)".
	ReasonUnsupportedVersion = "unsupported session format version"
)

// CorruptError describes why a session file was rejected. Its message is
// "<path>:<line>: <reason>" (or "<path>: <reason>" without a line), the text
// ama prints. For "invalid JSON line" Line is the physical line number
// (1-based, blank lines counted); for the structural reasons it counts
// non-blank lines only (the header is line 1), as ama does.
type CorruptError struct {
	Path   string
	Line   int // 0 when the reason concerns the whole file
	Reason string
}

func (e *CorruptError) Error() string {
	if e.Line > 0 {
		return e.Path + ":" + strconv.Itoa(e.Line) + ": " + e.Reason
	}
	return e.Path + ": " + e.Reason
}

// Is makes errors.Is(err, ErrCorrupt) true.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

func corrupt(path string, line int, reason string) error {
	return &CorruptError{Path: path, Line: line, Reason: reason}
}
