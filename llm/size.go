package llm

import "encoding/json"

// EncodedLen is len(json.Marshal(v)) without keeping the encoding: the
// bytes go to a counter, so estimating the size of a context holding a
// 50 MiB prompt costs one encoding buffer, not two.
func EncodedLen(v any) int {
	var c counter
	if json.NewEncoder(&c).Encode(v) != nil {
		return 0
	}
	return int(c) - 1 // Encode adds a newline
}

type counter int

func (c *counter) Write(p []byte) (int, error) {
	*c += counter(len(p))
	return len(p), nil
}
