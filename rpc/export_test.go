package rpc

// SetOnPending installs a hook called when an ask starts waiting.
func SetOnPending(b *Broker, f func(id string)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.onPending = f
}

// MaxEarlyAnswers is the bound of answers kept for requests not asked yet.
const MaxEarlyAnswers = maxEarlyAnswers
