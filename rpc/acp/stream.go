package acp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sync"

	"github.com/sourcegraph/jsonrpc2"
	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/internal/jsonobj"
	"github.com/armadra/ama-rpc/internal/stdio"
	"github.com/armadra/ama-rpc/rpc/internal/wirecode"
)

// Stream is a newline-framed jsonrpc2.ObjectStream: one JSON-RPC message
// per line in both directions (ACP's stdio framing).
//
// Reading uses stdio.LineReader (lines end at '\n', a trailing '\r' is
// dropped, blank lines are skipped). A line that is not JSON is answered
// with a JSON-RPC parse error (-32700, id null); a JSON line that is not a
// request or response is answered with -32600. Either way the line is
// skipped and the connection lives on: ReadObject only returns an error
// once the stream is closed.
//
// At the end of input ReadObject does not return io.EOF at once (that
// would make jsonrpc2.Conn close and refuse the replies still owed); it
// closes EOF() and parks until Close, so the server decides when the
// connection ends.
//
// Writing encodes each message as one line, with the envelope keys in the
// order jsonrpc, id, method, params, result, error and without HTML
// escaping, and hands it to the single stdio.Writer. Close never closes the
// output.
type Stream struct {
	lr  *stdio.LineReader
	w   *stdio.Writer
	log *zap.Logger

	eof       chan struct{}
	eofOnce   sync.Once
	closed    chan struct{}
	closeOnce sync.Once

	mu      sync.Mutex
	badLine int    // count of rejected lines (tests, logs)
	parked  []byte // the params of the request just read, kept out of the library (see park)

	ids idMap // request ids that jsonrpc2 would not round-trip (ids.go)

	sc jsonobj.Scanner // ReadObject's (the one read goroutine's)
}

var _ jsonrpc2.ObjectStream = (*Stream)(nil)

// NewStream reads messages from in and writes them through w. max bounds
// one input line (0: stdio.MaxLineBytes).
func NewStream(in io.Reader, w *stdio.Writer, max int, log *zap.Logger) *Stream {
	if log == nil {
		log = zap.NewNop()
	}
	return &Stream{lr: stdio.NewLineReader(in, max), w: w, log: log, eof: make(chan struct{}), closed: make(chan struct{})}
}

// EOF is closed when the input has ended.
func (s *Stream) EOF() <-chan struct{} { return s.eof }

// BadLines returns how many input lines were rejected.
func (s *Stream) BadLines() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.badLine
}

// ReadObject decodes the next valid message into v (a pointer). Invalid
// lines are answered and skipped.
func (s *Stream) ReadObject(v any) error {
	for {
		select {
		case <-s.closed:
			return io.EOF
		default:
		}
		line, err := s.lr.Next()
		if errors.Is(err, stdio.ErrLineTooLong) {
			s.reject(errBadRequest, "line too long", nil)
			continue
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				s.log.Warn("read stdin", zap.Error(err))
			}
			s.eofOnce.Do(func() { close(s.eof) })
			<-s.closed
			return io.EOF
		}
		// One validating pass that also records the top-level members
		// (park reads them): jsonobj.Scanner gives json.Valid's verdict
		// at about ten times its speed (encoding/json has no call that
		// hands back the members' spans). The library's decode below sees
		// a small line only (park).
		kind := s.sc.Scan(line)
		if kind == jsonobj.Invalid {
			s.reject(errParseLine, "the line is not one JSON value", nil)
			continue
		}
		s.mu.Lock()
		s.parked = nil
		s.mu.Unlock()
		var members []jsonobj.Member // line's, when it is an object
		if kind == jsonobj.Object {
			members = s.sc.Members(0)
		}
		if len(line) >= parkBytes && members != nil {
			line = s.lr.Take(line) // the members are offsets: they hold for it
			line = s.park(line, members)
			members = nil // another line now (small: ids.in walks it)
		}
		sent := line
		line, internal := s.ids.in(line, members)
		resetValue(v)
		if err := json.Unmarshal(line, v); err != nil {
			resetValue(v)
			s.ids.forget(internal)
			s.reject(errBadRequest, err.Error(), requestID(sent))
			continue
		}
		return nil
	}
}

// parkBytes is the line size from which a request's params are parked.
const parkBytes = 1 << 20

// park keeps the params of a huge request (a session/prompt holding a
// pasted file) out of jsonrpc2: the library decodes a request through a
// json.Decoder, whose buffer grows to the whole line, and copies the params
// into a json.RawMessage of their own, two more copies of a 50 MiB prompt
// (a 50 MiB prompt peaked at 623 MB over ACP). The library sees the line
// with the params replaced by {}, and the params stay a sub-slice of the
// line until the handler takes them (TakeParams). The handler runs inline
// in the library's read loop, right after this ReadObject and before the
// next, which clears the slot, so the params cannot reach another request.
// A line that is not a request (no "method") is left as it is.
func (s *Stream) park(line []byte, members []jsonobj.Member) []byte {
	var params []byte
	method := false
	for i := range members {
		switch m := &members[i]; {
		case m.KeyIs(line, "method"):
			method = true
		case m.KeyIs(line, "params"):
			params = m.Val(line) // the last one wins, as in encoding/json
		}
	}
	if !method || len(params) < 2 || (params[0] != '{' && params[0] != '[') {
		return line
	}
	at := cap(line) - cap(params) // params is line[at:at+len(params)]
	small := make([]byte, 0, len(line)-len(params)+2)
	small = append(small, line[:at]...)
	small = append(small, "{}"...)
	small = append(small, line[at+len(params):]...)
	s.mu.Lock()
	s.parked = params
	s.mu.Unlock()
	return small
}

// TakeParams returns the params parked for the request just read (nil if
// none) and clears the slot.
func (s *Stream) TakeParams() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.parked
	s.parked = nil
	return p
}

// resetValue zeroes *v so a failed decode leaves nothing behind.
func resetValue(v any) {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv.Elem().SetZero()
	}
}

// requestID returns the id of a message that could not be decoded, as
// sent, when it is a number or a string (else nil: the reply carries id
// null).
func requestID(line []byte) json.RawMessage {
	var id json.RawMessage
	jsonobj.Members(line, func(k string, v []byte) {
		if k == "id" {
			id = v
		}
	})
	if len(id) == 0 || string(id) == "null" || !mappable(id) {
		return nil
	}
	return bytes.Clone(id)
}

// RequestID returns the id jsonrpc2 holds for a request id as the client
// writes it (the requestId of $/cancel_request); false when it names no
// request that can be pending.
func (s *Stream) RequestID(raw json.RawMessage) (jsonrpc2.ID, bool) { return s.ids.lookup(raw) }

// reject writes an error response for a line that is not a message:
// the code of sentinel (errParseLine or errBadRequest) from the one table,
// its text as message. The library's Response cannot carry id null, so
// the line is built here.
func (s *Stream) reject(sentinel error, detail string, id json.RawMessage) {
	code, _ := wirecode.ACP(sentinel)
	s.mu.Lock()
	s.badLine++
	s.mu.Unlock()
	s.log.Warn("rejected input line", zap.Int64("code", code), zap.String("detail", detail))
	if id == nil {
		id = json.RawMessage("null")
	}
	line := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%q}}`+"\n", id, code, sentinel.Error())
	s.w.SendLine(line)
}

// WriteObject writes one message as one line.
func (s *Stream) WriteObject(obj any) error {
	raw, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	line, err := encodeEnvelopeID(raw, s.ids.out)
	if err != nil {
		return err
	}
	s.w.SendLine(line)
	return nil
}

// Close releases a reader parked at the end of input. It does not close
// the input or the output.
func (s *Stream) Close() error {
	s.closeOnce.Do(func() { close(s.closed) })
	return nil
}
