//go:build unix

package tools

import "syscall"

// openExtraFlags are added to every open of a tool: O_NONBLOCK so that a
// FIFO (or a device) cannot block the open itself before fstat refuses it,
// O_NOCTTY so that a terminal never becomes the controlling one.
const openExtraFlags = syscall.O_NONBLOCK | syscall.O_NOCTTY
