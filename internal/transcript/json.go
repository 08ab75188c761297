package transcript

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Value is a decoded JSON value that keeps object key order: nil, bool,
// json.Number, string, []Value or *Object.
type Value any

// Object is a JSON object with ordered keys.
type Object struct {
	Keys   []string
	Values map[string]Value
}

// Get returns the value of key.
func (o *Object) Get(key string) (Value, bool) {
	v, ok := o.Values[key]
	return v, ok
}

// String returns the string value of key ("" when absent or not a string).
func (o *Object) String(key string) string {
	s, _ := o.Values[key].(string)
	return s
}

// Parse decodes one JSON value keeping key order.
func Parse(data []byte) (Value, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := parseValue(dec)
	if err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after JSON value")
	}
	return v, nil
}

func parseValue(dec *json.Decoder) (Value, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &Object{Values: map[string]Value{}}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k := kt.(string)
				v, err := parseValue(dec)
				if err != nil {
					return nil, err
				}
				if _, dup := o.Values[k]; !dup {
					o.Keys = append(o.Keys, k)
				}
				o.Values[k] = v
			}
			_, err := dec.Token()
			return o, err
		case '[':
			arr := []Value{}
			for dec.More() {
				v, err := parseValue(dec)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			_, err := dec.Token()
			return arr, err
		}
	}
	return tok, nil
}

// Encode writes v as compact JSON in key order (no HTML escaping).
func Encode(v Value) []byte {
	var buf bytes.Buffer
	encode(&buf, v)
	return buf.Bytes()
}

func encode(buf *bytes.Buffer, v Value) {
	switch t := v.(type) {
	case nil:
		buf.WriteString("null")
	case bool:
		buf.WriteString(strconv.FormatBool(t))
	case json.Number:
		buf.WriteString(string(t))
	case string:
		enc := json.NewEncoder(buf)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(t)
		buf.Truncate(buf.Len() - 1)
	case []Value:
		buf.WriteByte('[')
		for i, x := range t {
			if i > 0 {
				buf.WriteByte(',')
			}
			encode(buf, x)
		}
		buf.WriteByte(']')
	case *Object:
		buf.WriteByte('{')
		for i, k := range t.Keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			encode(buf, k)
			buf.WriteByte(':')
			encode(buf, t.Values[k])
		}
		buf.WriteByte('}')
	default:
		panic(fmt.Sprintf("golden: unexpected value %T", v))
	}
}

// kind names the JSON type of v.
func kind(v Value) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	case string:
		return "string"
	case []Value:
		return "array"
	case *Object:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}
