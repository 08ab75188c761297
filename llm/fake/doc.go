// Package fake is the scripted model provider (fake/echo, fake/reasoning)
// used by tests, goldens and benchmarks. A script file (AMA_FAKE_SCRIPT)
// lists replies made of text, thinking and tool-call steps with chunk sizes,
// delays, usage and errors; calls are numbered across the whole process.
//
// Concurrency: a Provider is safe for concurrent Stream calls; the call
// counter and the record file are guarded by a mutex.
package fake
