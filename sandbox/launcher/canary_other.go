//go:build !linux

package launcher

// CanaryArg is the hidden subcommand of the canary probes (Linux only).
const CanaryArg = "__sandbox-canary"
