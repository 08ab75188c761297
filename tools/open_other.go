//go:build !unix

package tools

// openExtraFlags: see open_unix.go.
const openExtraFlags = 0
