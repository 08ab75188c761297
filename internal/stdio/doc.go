// Package stdio is the line-framed transport both wire protocols share
// (the native {id,type} protocol in rpc and ACP in rpc/acp), and the one a
// later stdio bridge can use: one JSON value per line in each direction.
//
//   - lines.go: LineReader (lines end only at '\n', one trailing '\r'
//     dropped, blank lines in the JavaScript sense skipped, oversized
//     lines reported as ErrLineTooLong and skipped); it tells
//     internal/memlimit of huge and dropped lines, as the writer does of
//     huge lines written.
//   - writer.go: Writer, the single goroutine that writes the output, with
//     backpressure, merging of consecutive deltas of one block (the
//     protocol renders them, WriterOptions.DeltaLine) and of consecutive
//     joinable lines with the same head and tail (SendJoinable: ACP
//     chunks), lines produced in pieces on the writer goroutine
//     (SendPieces: replay, never built whole) or in vectors of pieces
//     that already exist (SendVector: get_tree, written with writev, the
//     pieces wire-clean by the fill's word), Broken at the first failed
//     write, Abandon; ValidUTF8, the last step before the output (its
//     predicate and rewrite are jsonstr's WireClean and AppendWireSafe).
//   - marshal.go: Marshal, one line without HTML escaping.
//   - shutdown.go: Finish, the end of a server's Run (signal, grace,
//     abandon), and ErrInterrupted.
//   - seq.go: Seq, one session's numbered stream (issue 35): lines sent
//     with a Seq (SendLineSeq, SendDeltaSeq, SendJoinableSeq; merging
//     and joining stay within one stream) are numbered by the writer
//     goroutine as it writes them, stamped by the protocol's Stamp and
//     kept in a bounded ring that a replay's SendPieces fill reads
//     (Range, Each).
//
// It imports no protocol package and knows no wire shape beyond "a JSON
// line"; the error → code table is rpc/internal/wirecode's.
//
// Concurrency contract: a LineReader belongs to one goroutine. Writer
// methods are safe for concurrent use; exactly one goroutine, started by
// NewWriter, writes to the output, and lines are written whole, in
// enqueue order; a SendPieces or SendVector line's fill runs on that
// goroutine, after the call returned, and must read only data nobody
// changes. A Seq's
// counter and ring belong to the writer goroutine (its Stamp and Extend
// run there; Range and Each only from a fill); Seq.Reserve is safe from
// any goroutine. Finish is called once, by the goroutine that runs the
// server.
package stdio
