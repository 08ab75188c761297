package stdio

import (
	"bytes"
	"encoding/json"
	"sync"
)

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// Marshal encodes v as one protocol line (with the trailing '\n'): no HTML
// escaping of <, > and &, and U+2028/U+2029 escaped (encoding/json always
// escapes those two).
func Marshal(v any) ([]byte, error) {
	return MarshalAfter(nil, v)
}

// pooledBytes is the largest buffer returned to bufPool: a bigger one (a
// huge prompt in an event) is handed to the caller instead of copied, and
// not pinned in the pool.
const pooledBytes = 64 << 10

// MarshalAfter encodes v like Marshal, after the bytes prefix (the native
// protocol puts an event's "type" first this way).
func MarshalAfter(prefix []byte, v any) ([]byte, error) {
	buf := bufPool.Get().(*bytes.Buffer)
	buf.Reset()
	buf.Write(prefix)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		bufPool.Put(buf)
		return nil, err
	}
	if buf.Cap() > pooledBytes {
		return buf.Bytes(), nil
	}
	out := bytes.Clone(buf.Bytes())
	bufPool.Put(buf)
	return out, nil
}
