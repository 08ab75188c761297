package openai

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	goopenai "github.com/sashabaranov/go-openai"
)

// sseReader reads the event stream of a chat completion the way
// go-openai's streamReader (RecvRaw, v1.43) does, with the same results
// for every input, but without its per-line costs: ReadBytes allocating
// every line and two regular expressions matched against it (about a third
// of the CPU of a long reply). The rules it keeps, quirks included:
//
//   - Lines end at "\n" and are trimmed of surrounding white space (so
//     "\r\n" works; a lone "\r" does not end a line). A line that is cut
//     by the end of the body is dropped.
//   - A line starting "data:" is an event; the prefix and the
//     [\t\n\f\r ] run after it are removed. "[DONE]" ends the stream
//     (io.EOF, also for every later call); an empty payload is returned
//     as nil.
//   - Every other line (blank separators, ": comments", "event:" lines)
//     counts towards limit per event (ErrTooManyEmptyStreamMessages) and
//     is appended to the error accumulator, as is the payload of an event
//     starting `{"error":`. Such an event, or the end of the body, decodes
//     the accumulator as an ErrorResponse: with an error inside, the call
//     fails with "error, <APIError>"; otherwise an error event returns
//     (nil, nil) and the end of the body its read error.
//
// go-openai keeps ownership of the request and the response; this reader
// only replaces RecvRaw on the response body it returned.
//
// One rule is added: a line longer than maxLine bytes fails the stream
// with errLineTooLong (go-openai grows its buffer without bound).
type sseReader struct {
	r        *bufio.Reader
	long     []byte       // a line longer than r's buffer
	acc      bytes.Buffer // go-openai's error accumulator
	limit    uint
	maxLine  int
	finished bool
}

// errLineTooLong is the error of a line longer than the reader's bound.
var errLineTooLong = errors.New("a line of the event stream is too long")

// sseBufferSize holds several network reads of chunks, so most lines are
// returned from the buffer without a copy.
const sseBufferSize = 64 << 10

func newSSEReader(body io.Reader, limit uint, maxLine int) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(body, sseBufferSize), limit: limit, maxLine: maxLine}
}

var (
	dataPrefix  = []byte("data:")
	errorPrefix = []byte(`{"error":`)
)

// next returns the payload of the next event. It is valid until the next
// call.
func (s *sseReader) next() ([]byte, error) {
	if s.finished {
		return nil, io.EOF
	}
	var empty uint
	hasErrorPrefix := false
	for {
		line, readErr := s.line()
		if readErr != nil || hasErrorPrefix {
			if b := s.acc.Bytes(); len(b) > 0 {
				var resp *goopenai.ErrorResponse
				if json.Unmarshal(b, &resp) == nil && resp != nil && resp.Error != nil {
					return nil, fmt.Errorf("error, %w", resp.Error)
				}
			}
			return nil, readErr
		}
		line = bytes.TrimSpace(line)
		data, isData := cutData(line)
		if isData && bytes.HasPrefix(data, errorPrefix) {
			hasErrorPrefix = true
		}
		if !isData || hasErrorPrefix {
			if hasErrorPrefix {
				line = data
			}
			s.acc.Write(line)
			empty++
			if empty > s.limit {
				return nil, goopenai.ErrTooManyEmptyStreamMessages
			}
			continue
		}
		if string(data) == "[DONE]" {
			s.finished = true
			return nil, io.EOF
		}
		if len(data) == 0 {
			return nil, nil // go-openai's regexp ReplaceAll returns nil for an empty payload
		}
		return data, nil
	}
}

// line reads up to and including the next "\n" (ReadBytes without the
// copy when the line fits the buffer). A line longer than maxLine is
// errLineTooLong once maxLine bytes of it were read: nothing more of the
// body is read, and the buffer never holds more than maxLine bytes.
func (s *sseReader) line() ([]byte, error) {
	line, err := s.r.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		return line, err
	}
	if s.maxLine > 0 && len(line) > s.maxLine {
		return nil, errLineTooLong
	}
	s.long = append(s.long[:0], line...)
	for err == bufio.ErrBufferFull {
		line, err = s.r.ReadSlice('\n')
		if s.maxLine > 0 && len(s.long)+len(line) > s.maxLine {
			s.long = nil
			return nil, errLineTooLong
		}
		s.long = append(s.long, line...)
	}
	return s.long, err
}

// cutData removes "data:" and the [\t\n\f\r ]* after it (go-openai's
// `^data:\s*`).
func cutData(line []byte) ([]byte, bool) {
	if !bytes.HasPrefix(line, dataPrefix) {
		return nil, false
	}
	d := line[len(dataPrefix):]
	for len(d) > 0 {
		switch d[0] {
		case '\t', '\n', '\f', '\r', ' ':
			d = d[1:]
			continue
		}
		break
	}
	return d, true
}
