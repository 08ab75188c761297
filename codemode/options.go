package codemode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// options are a script's `// @options:` line.
type options struct {
	maxOutputTokens int
	timeoutMs       int
}

var defaultOptions = options{maxOutputTokens: 10000, timeoutMs: 300000}

var optionsLine = regexp.MustCompile(`^\s*//\s*@options:(.*)$`)

// parseOptions reads the optional first line of script. The error is the
// text of the tool's error result (no process is started).
func parseOptions(script string) (options, error) {
	o := defaultOptions
	first, _, _ := strings.Cut(script, "\n")
	m := optionsLine.FindStringSubmatch(strings.TrimSuffix(first, "\r"))
	if m == nil {
		return o, nil
	}
	const prefix = "Invalid // @options line: "
	var raw any
	dec := json.NewDecoder(bytes.NewReader([]byte(m[1])))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return o, fmt.Errorf("%s%v", prefix, err)
	}
	if dec.More() {
		return o, fmt.Errorf("%sunexpected text after the JSON value", prefix)
	}
	obj, ok := raw.(map[string]any)
	if !ok {
		return o, fmt.Errorf("%sexpected a JSON object", prefix)
	}
	for k, v := range obj {
		var dst *int
		var hi int64
		switch k {
		case "max_output_tokens":
			dst, hi = &o.maxOutputTokens, 1000000
		case "timeout_ms":
			dst, hi = &o.timeoutMs, 3600000
		default:
			return o, fmt.Errorf(`%sunknown option "%s" (use max_output_tokens, timeout_ms)`, prefix, k)
		}
		n, ok := v.(json.Number)
		i, err := n.Int64()
		if !ok || err != nil || i < 1 || i > hi {
			return o, fmt.Errorf("%s%s must be an integer between 1 and %d", prefix, k, hi)
		}
		*dst = int(i)
	}
	return o, nil
}
