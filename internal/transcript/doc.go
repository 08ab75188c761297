// Package transcript holds what compares wire transcripts across runs:
// an order-keeping JSON value (Parse, Encode, Object), the normaliser of
// run-specific parts (Normalizer: times, ids, temporary paths), the merge
// of streaming deltas the writer may join (MergeDeltas) and the
// comparison by shape (CompareShape). The golden tests and the replay kit
// (`ama-rpc replay`, package replaykit) share it.
//
// A pure leaf: no state beyond the values passed in; a Normalizer is
// read-only while it works, so one may be used by several goroutines.
package transcript
