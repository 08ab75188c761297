package openai

// NewReference returns a provider that reads streams with go-openai's
// RecvRaw and decodes every chunk with encoding/json (no fast path): the
// reference of the differential tests.
func NewReference(o Options) *Provider {
	p := New(o)
	p.reference = true
	return p
}
