package tools

// Jobs is the registry of background bash jobs of a session.
type Jobs struct{}
