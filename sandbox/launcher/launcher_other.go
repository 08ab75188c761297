//go:build !linux

package launcher
