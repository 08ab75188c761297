package printmode

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/armadra/ama-rpc/internal/i18n"
)

// The search hint (ama's print-mode.md §5): the presets minimal and
// coordinator have no grep or glob tool, so a model searches with bash
// (grep, rg, find), and unattended those calls are denied. When a denied
// bash command searches and the run's active tools lack grep or glob, one
// stderr line after the denied line says how to add the missing ones. It
// changes no decision and never reaches the model.

// hintPresets are the presets the hint is given for: default has both
// tools, codemode-only reaches them from scripts.
var hintPresets = []string{"minimal", "coordinator"}

// searchPrograms are the programs a search command starts with.
var searchPrograms = []string{"grep", "egrep", "fgrep", "rg", "ag", "ack", "find", "fd"}

// IsSearchCommand reports whether a shell command runs a search program
// in command position: at its start or after a separator (; & | ( ` and
// so $( and a newline), past `NAME=value` assignments and a `sudo`, with
// or without a directory (/usr/bin/grep). A program name elsewhere (an
// argument, `git grep`, `echo grep`) is not one.
func IsSearchCommand(cmd string) bool {
	start := 0
	for i := 0; i <= len(cmd); i++ {
		if i < len(cmd) && !isSeparator(cmd[i]) {
			continue
		}
		if searchAt(cmd[start:i]) {
			return true
		}
		start = i + 1
	}
	return false
}

func isSeparator(c byte) bool {
	switch c {
	case ';', '&', '|', '(', '`', '\n':
		return true
	}
	return false
}

// searchAt reports whether the simple command seg (no separators) starts
// a search program.
func searchAt(seg string) bool {
	words := strings.Fields(seg)
	for len(words) > 0 && isAssignment(words[0]) {
		words = words[1:]
	}
	if len(words) > 0 && words[0] == "sudo" {
		words = words[1:]
	}
	if len(words) == 0 {
		return false
	}
	prog := strings.TrimRight(words[0], ")")
	if i := strings.LastIndexByte(prog, '/'); i >= 0 {
		prog = prog[i+1:]
	}
	return slices.Contains(searchPrograms, prog)
}

// isAssignment reports a shell variable assignment word, NAME=value.
func isAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	if !ok || name == "" {
		return false
	}
	for i, c := range name {
		if c != '_' && !('a' <= c && c <= 'z') && !('A' <= c && c <= 'Z') && (i == 0 || !('0' <= c && c <= '9')) {
			return false
		}
	}
	return true
}

// searchHint writes the hint line when preset is one it is given for,
// active lacks grep or glob, and a denied bash command searched.
func searchHint(w io.Writer, preset string, active, deniedBash []string, lang i18n.Lang) {
	if !slices.Contains(hintPresets, preset) || !slices.ContainsFunc(deniedBash, IsSearchCommand) {
		return
	}
	var missing []string
	for _, t := range []string{"grep", "glob"} {
		if !slices.Contains(active, t) {
			missing = append(missing, t)
		}
	}
	switch len(missing) {
	case 1:
		fmt.Fprintln(w, i18n.T(lang, i18n.PrintSearchOne, preset, missing[0]))
	case 2:
		fmt.Fprintln(w, i18n.T(lang, i18n.PrintSearchBoth, preset))
	}
}
