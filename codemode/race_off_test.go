//go:build !race

package codemode

const raceOn = false
