// Package approvals decides whether a tool call may run, must be approved by
// a person, or is refused. It is the pure part of the permission system:
// permission modes, allow/deny rules, the dangerous-command list, the auto
// mode rule and static tiers, session memory ("allow for this session") and
// the layering of configuration with its trust boundaries.
//
// Shell commands are judged on the mvdan.cc/sh/v3 syntax tree, never on the
// raw text: every simple command of every list, pipeline, subshell,
// substitution, compound command and nested script (sh -c, eval, xargs,
// find -exec, env -S, and whatever a shell reads as its script from standard
// input: here-documents, here-strings, pipes, input redirects, process
// substitutions; see stdin.go) is visited, command names are normalised
// (quotes, backslashes, paths, assignments and wrappers such as env, nice,
// timeout, command, sudo, busybox are removed) and redirect and operand
// targets are resolved lexically against the session directory. Options
// are parsed with per-program option tables (optable.go, progtables.go)
// that follow the program's own parser: GNU/git unique-prefix
// abbreviations, clusters, "=value" or separate values, "--"; the safe and
// read-only lists accept only the options an entry lists, and the
// dangerous list resolves abbreviations the same way. Commands that other
// programs run (git difftool -x, tar --to-command, sed e, strace, tmux,
// gdb -ex shell, ...; runners.go) are nested layers. Whatever
// cannot be analysed fails closed: it asks, and it is refused where nobody
// can be asked; a read is judged by everything it can reach (reach.go: a
// tree walk rooted at an ancestor of a secret is not read-only; a command
// whose output is a credential, such as gh auth token or git credential
// fill, and one that prints a credential variable of the environment or
// dumps it, is a secret read, credcmds.go; a value the command binds to a
// variable, an array, a for list or a here-string is judged like an
// argument, and a glob by the credential stores it can match as bash
// matches, see secrets.GlobMatchReason); what users
// cannot undo is on the dangerous list with one id per category
// (destructive.go); a script a shell reads that is only known at run time (a
// file, a variable, another program's output) is opaque, which asks too.
//
// Not here: the approval broker (pending requests, timeouts), the model
// classifier of auto mode, PreToolUse hooks (package hooks; their verdict is folded in by hooks.ApplyToVerdict) and the OS
// sandbox itself (package sandbox; Policy.Sandbox says whether it is active
// and sandbox.go holds the free pass). Decide reports through
// Verdict.Classify that the classifier should be consulted; the caller does
// that and folds the answer in with Verdict.WithClassifier and Finalize.
//
// Purity: the package performs no I/O at all. Paths are judged as text and
// need not exist; ~user is never looked up. What is on disk comes in as
// data: Call.Facts (built by tools.Resolve) carries the target of a file
// tool with its symlinks resolved and the bash analysis run in the resolved
// cwd argument with its targets resolved (AnalyzeShellIn, PathsToResolve,
// WithRealPaths), and where the links its globs match and the links below
// the roots of a walk that follows them (grep -R, rg -L, tar -h, zip -r)
// lead (LinkScans, WithLinks). With Facts, deny rules hit when any name of the path
// matches (lexical or resolved), allow rules and "inside the project" need
// the resolved one. Without Facts (tests) the judgement is lexical only;
// the bash cwd argument is honoured either way.
//
// Concurrency: AnalyzeShell, Decide, ParseRule, BuildPolicy and the Rule and
// Analysis methods keep no shared mutable state (the option tables are
// built at init and only read) and are safe for concurrent use (a
// fresh shell parser is created per analysis). A *Policy must not be mutated
// while Decide runs with it. Memory is guarded by a mutex and may be shared
// by any number of goroutines. No function starts a goroutine.
package approvals
