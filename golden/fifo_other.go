//go:build !unix

package golden

import "errors"

func mkfifo(string) error { return errors.New("no FIFOs on this system") }
