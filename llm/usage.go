package llm

// Usage counts the tokens of one request. Cost is absent while streaming and
// set when the reply is final.
type Usage struct {
	Input       int   `json:"input"`
	Output      int   `json:"output"`
	CacheRead   int   `json:"cacheRead"`
	CacheWrite  int   `json:"cacheWrite"`
	TotalTokens int   `json:"totalTokens"`
	Cost        *Cost `json:"cost,omitempty"`
	// NoCacheField is set by adapters when the raw usage had no cache
	// field at all (the endpoint may not report caching). Not persisted.
	NoCacheField bool `json:"-"`
}

// Cost is the USD cost of one request by token kind.
type Cost struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
	Total      float64 `json:"total"`
}

// Prices are USD per million tokens.
type Prices struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
}

// Finalize sets TotalTokens and Cost from the prices. The arithmetic matches
// ama: each field is price*tokens/1e6 (multiply first), and the total is the
// sum in the order input, output, cacheRead, cacheWrite.
func (u *Usage) Finalize(p Prices) {
	u.TotalTokens = u.Input + u.Output + u.CacheRead + u.CacheWrite
	c := &Cost{
		Input:      p.Input * float64(u.Input) / 1e6,
		Output:     p.Output * float64(u.Output) / 1e6,
		CacheRead:  p.CacheRead * float64(u.CacheRead) / 1e6,
		CacheWrite: p.CacheWrite * float64(u.CacheWrite) / 1e6,
	}
	c.Total = c.Input + c.Output + c.CacheRead + c.CacheWrite
	u.Cost = c
}

// Add accumulates o into u (cost is summed when both have one).
func (u *Usage) Add(o Usage) {
	u.Input += o.Input
	u.Output += o.Output
	u.CacheRead += o.CacheRead
	u.CacheWrite += o.CacheWrite
	u.TotalTokens += o.TotalTokens
}
