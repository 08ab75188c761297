package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
)

// NewReference returns a provider that reads streams with go-openai's
// RecvRaw and decodes every chunk with encoding/json (no fast path): the
// reference of the differential tests.
func NewReference(o Options) *Provider {
	p := New(o)
	p.reference = true
	return p
}

// CompareDecoders decodes raw with parseFast and, when it takes the chunk,
// with encoding/json as the stream's fallback would; diff describes any
// difference ("" when they agree or parseFast refused).
func CompareDecoders(raw []byte) (fast bool, diff string) {
	var fc chunk
	var scratch []byte
	if !parseFast(raw, &fc, &scratch) {
		return false, ""
	}
	var jc chunk
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&jc); err != nil {
		return true, "parseFast took it, encoding/json failed: " + err.Error()
	}
	if dec.More() {
		return true, "parseFast took it, encoding/json sees trailing data"
	}
	normalize(&fc)
	normalize(&jc)
	if !reflect.DeepEqual(fc, jc) {
		f, _ := json.Marshal(fc)
		j, _ := json.Marshal(jc)
		return true, fmt.Sprintf("parseFast %s\nencoding/json %s", f, j)
	}
	return true, ""
}

// normalize makes empty slices nil: the stream only ranges over them.
func normalize(c *chunk) {
	if len(c.Choices) == 0 {
		c.Choices = nil
	}
	for i := range c.Choices {
		if d := &c.Choices[i].Delta; len(d.ToolCalls) == 0 {
			d.ToolCalls = nil
		}
	}
}
