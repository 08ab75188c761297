package llm

import (
	"encoding/json"

	"github.com/armadra/ama-rpc/internal/jsonstr"
)

// EncodedLen is len(json.Marshal(v)) without keeping the encoding: the
// bytes go to a counter. The string content of user and custom messages
// (where a 50 MiB prompt lives) is counted without being encoded at all,
// so estimating the size of a context allocates nothing in proportion to
// it.
func EncodedLen(v any) int {
	switch m := v.(type) {
	case *UserMessage:
		if !m.Content.IsBlocks && len(m.Content.Text) > 0 {
			c := *m
			c.Content.Text = ""
			return encodedLen(&c) + textLen(m.Content.Text)
		}
	case *CustomMessage:
		if !m.Content.IsBlocks && len(m.Content.Text) > 0 {
			c := *m
			c.Content.Text = ""
			return encodedLen(&c) + textLen(m.Content.Text)
		}
	}
	return encodedLen(v)
}

// textLen is what s adds to a message's encoding in place of "": its
// json.Marshal form (HTML escaped) less the two quotes already counted.
func textLen(s string) int { return jsonstr.Len(s, jsonstr.Wire, true) - 2 }

func encodedLen(v any) int {
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
