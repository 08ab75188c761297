// Package tools implements the agent's built-in tools (read, write, edit,
// bash, grep, glob, ls), their JSON Schema validation and their approval
// previews.
//
// Registry holds an ordered set of tools with compiled argument schemas:
// Default returns the seven built-ins in name order, Decls gives the
// declarations sent to the model (parameter schemas are hand-written
// literals whose key order matches the reference; descriptions are the
// embedded files in descriptions/), Validate checks arguments, and Run
// bundles lookup, validation, execution, panic recovery and the 30 000
// character cap with the protocol's error texts ("Tool <name> not found",
// "Invalid arguments for <name>:\n…", "aborted by user"); Execute is that
// runner without lookup and validation, and the session runs every call
// through it.
//
// Paths given by the model are resolved against Env.Cwd ("~" is
// Env.Home); results name paths relative to Env.Cwd when they are inside
// it, as the model spelled them.
//
// Resolve is the one interpretation of a call: the bash working directory
// (the cwd argument), every path the call reads or writes with the
// symlinks of its existing prefix resolved, and the shell analysis run in
// that directory with its targets resolved, its globs expanded and the
// trees of its link-following walks looked at for links leading out
// (linkscan.go, bounded: 50,000 entries, 10,000 matches a glob). The
// session computes it once;
// the verdict (Resolved.Facts), the approval preview, the checkpoint
// (Resolved.Changes) and the execution (Call.Resolved) all use it. File
// tools open what was judged and nothing else (open.go): from an os.Root
// of the project (or of / for paths outside it), one directory at a time,
// each checked to be the directory lstat saw, the file itself never
// through a symlink, new files with O_EXCL; a directory swapped for a
// symlink after the verdict fails with ErrPathChanged. Opens use O_NONBLOCK
// and fstat decides: read, grep, ls, edit, write and previews refuse
// devices, FIFOs and sockets (ErrNotRegular) and bound every read (read:
// ReadMaxScanBytes, grep: GrepMaxFileBytes, edit: EditMaxFileBytes, images:
// ReadMaxImageBytes). grep does not follow a symlinked file out of the
// project and the search root. Text over MaxResultChars is cut (read, grep, glob and ls keep the
// head, bash keeps the tail) and the full text is saved under
// Env.OutputDir, created with mode 0700 when first needed, in a new file
// created by internal/ownfs (O_EXCL, no link out of its parent).
//
// write and edit refuse to change an existing file the session has not
// read (Env.Reads), call Env.BeforeChange before changing anything and mark
// the file as read afterwards. edit applies all its replacements to the
// original content or none of them.
//
// bash runs `<shell> -c command` as the leader of a new process group
// (stdin from the null device, the environment of Env.CommandEnviron, which is internal/childenv's: the
// server's without the model's credentials, git settings forced through
// GIT_CONFIG_* so that repository configuration cannot run programs, plus
// Env.ExtraEnv); a timeout or an ended ctx stops the whole group (SIGTERM, SIGKILL after KillGrace).
// background:true hands the command to Env.Jobs, which reports lifecycle
// changes through the callback given to NewJobs. A job's log is created by
// internal/ownfs and kept open: wait and output read its tail through that
// descriptor, never by reopening the path, which the job itself could have
// swapped for a link to a secret (issue 24); StopAll closes the logs. grep and glob honour
// .gitignore and .ignore files (each applies to its directory's subtree;
// a pattern that one file ignores cannot be re-included by a deeper file),
// always skip .git and never follow symlinked directories.
//
// Concurrency: tool values are stateless and may be shared; a Resolved is
// immutable once Resolve returns and may be read by any goroutine; per-session
// state lives in Env (ReadTracker, Jobs), whose types are safe for
// concurrent use. Execute may be called concurrently for read tools. Tools
// never write to stdout. Execute returns an error only when ctx ended
// (abort) or for bugs; every other failure is an error Result for the
// model. bash and Jobs leave no goroutines behind: Execute returns after
// its helpers ended, and Jobs.StopAll waits for every job.
//
// Speed (issue 19): the walk of grep and glob lists the directories it
// will enter ahead on two goroutines (walk.go) and visits in lexical order
// on the calling one; grep reads and searches the files on a bounded pool
// (grepWorkers) with one reused buffer per worker, sized by fstat of the
// descriptor opened with raw system calls (fileread_unix.go), and adds the
// per-file results in walk order, so output, limits and counts are those
// of a sequential search; glob stats its hits on the same number of
// goroutines; read counts the lines after its page with bytes.Count. All
// of these goroutines end before Execute returns, also on abort. The
// differential test (differential_unix_test.go) compares every tool with
// the answers of its code from before, recorded in testdata/.
package tools
