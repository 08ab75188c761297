//go:build race

package codemode

// raceOn: this test binary has the race detector, whose runtime
// (ThreadSanitizer) fails in its own ways under the child's RLIMIT_DATA.
const raceOn = true
