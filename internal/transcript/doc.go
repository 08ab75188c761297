// Package transcript holds what runs and compares wire transcripts: the
// one step runner of the golden tests and the replay kit (ParseSteps,
// Play against a Target), the stdout collector (Output), the temporary
// root (TempRoot, RemoveAll), and
// an order-keeping JSON value (Parse, Encode, Object), the normaliser of
// run-specific parts (Normalizer: times, ids, temporary paths), the merge
// of streaming deltas the writer may join (MergeDeltas) and the
// comparison by shape (CompareShape). The golden tests and the replay kit
// (`ama-rpc replay`, package replaykit) share it.
//
// A leaf (standard library only). An Output is safe for concurrent use
// (one goroutine collects, others wait and read under its mutex); Play
// runs on the caller's goroutine and touches the target only through its
// methods. Everything else keeps no state beyond the values passed in; a
// Normalizer is read-only while it works, so one may be used by several
// goroutines.
package transcript
