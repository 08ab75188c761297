package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
)

// intArg is an integer argument. JSON Schema counts 5.0 as an integer, so
// it accepts any integral number; huge values are clamped.
type intArg int

func (n *intArg) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	f, err := json.Number(bytes.TrimSpace(b)).Float64()
	if err != nil || f != math.Trunc(f) {
		return fmt.Errorf("expected an integer, got %s", b)
	}
	switch {
	case f > math.MaxInt32:
		f = math.MaxInt32
	case f < math.MinInt32:
		f = math.MinInt32
	}
	*n = intArg(f)
	return nil
}

// or is n, or def when n is absent (zero) or negative: a limit's default.
func (n intArg) or(def int) int {
	if n <= 0 {
		return def
	}
	return int(n)
}

// decodeArgs decodes call.Args into v. On failure it returns an error
// result in the runner's wording (arguments are normally validated before
// Execute, so this only happens when a caller skipped validation).
func decodeArgs(name string, call *Call, v any) *Result {
	args := call.Args
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage(`{}`)
	}
	if err := json.Unmarshal(args, v); err != nil {
		return ErrorResult("Invalid arguments for " + name + ":\n- " + err.Error())
	}
	return nil
}

// errorf returns an error result with a formatted text.
func errorf(format string, a ...any) *Result {
	return ErrorResult(fmt.Sprintf(format, a...))
}

// env returns the call's Env, or an empty one (process cwd, no tracker).
func (c *Call) env() *Env {
	if c.Env == nil {
		return &Env{}
	}
	return c.Env
}
