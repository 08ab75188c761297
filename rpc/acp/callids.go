package acp

import (
	"strconv"
	"sync"
)

// callIDs gives every tool call of a session its own ACP toolCallId. The
// model's ids are not enough: a model may reuse one ("call_0" in every
// turn), and a client keys its tool-call cards by toolCallId. A call keeps
// the model's id unless the session has already shown that id; then it
// gets the first free "<id>#<n>" (n = 2, 3, …). The mapping of a running
// call lasts from its tool_call to its last update. Safe for concurrent
// use: the translator (event callbacks) opens and ends calls, the approver
// (a runner goroutine) looks them up.
type callIDs struct {
	mu   sync.Mutex
	live map[string]string // model id -> ACP id of the running call
	used map[string]bool   // every ACP id shown in this session
}

func newCallIDs() *callIDs {
	return &callIDs{live: map[string]string{}, used: map[string]bool{}}
}

// open returns the ACP id of a call that starts now.
func (c *callIDs) open(modelID string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	id := modelID
	for n := 2; c.used[id]; n++ {
		id = modelID + "#" + strconv.Itoa(n)
	}
	c.used[id] = true
	c.live[modelID] = id
	return id
}

// get returns the ACP id of the running call with this model id (the
// model's id when no such call runs).
func (c *callIDs) get(modelID string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if id, ok := c.live[modelID]; ok {
		return id
	}
	return modelID
}

// end returns the ACP id of a call that ends now and forgets the mapping.
func (c *callIDs) end(modelID string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	id, ok := c.live[modelID]
	if !ok {
		return modelID
	}
	delete(c.live, modelID)
	return id
}
