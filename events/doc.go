// Package events defines the vocabulary of session events and the Bus that
// delivers them.
//
// Events are the session transcript: each struct's JSON encoding (field
// order = key order, optional fields omitted) is the shape hosts see, with
// "type" added in front by the writer. The rpc package projects only
// message_update (delta only, never the accumulated message).
//
// Concurrency: a Bus may be used from any goroutine; it serialises Publish
// calls so that every subscriber observes one total order; Hold runs a
// function at one point of that order (no event in delivery). Event values are
// immutable after publication (the Partial message of MessageUpdate belongs
// to the producer and must only be read during the callback).
package events
