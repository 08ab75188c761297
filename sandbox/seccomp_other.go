//go:build !linux || !(amd64 || arm64)

package sandbox

import "errors"

func seccompFilter(bool) (string, error) {
	return "", errors.New("no seccomp filter for this architecture")
}
