package jsonobj

// Members calls fn with each top-level key of the JSON object b and the
// raw bytes of its value, a sub-slice of b (nothing is copied: a 50 MiB
// prompt is not duplicated just to find its "type" and "id"). It returns
// false when b is not one valid JSON object. Keys are decoded like
// encoding/json does; a repeated key is reported each time (the last one
// wins for callers that overwrite).
func Members(b []byte, fn func(key string, val []byte)) bool {
	var s Scanner
	if s.Scan(b) != Object {
		return false
	}
	for i := range s.Fields {
		f := &s.Fields[i]
		fn(f.Key(b), b[f.VS:f.VE])
	}
	return true
}

// RawMembers is Members with the key as it is written: its raw JSON
// string, quotes and escapes included, a sub-slice of b like the value.
// For callers that compare many keys against a few names and would
// rather not make a string of each.
func RawMembers(b []byte, fn func(key, val []byte)) bool {
	var s Scanner
	if s.Scan(b) != Object {
		return false
	}
	for _, f := range s.Fields {
		fn(b[f.KS:f.KE], b[f.VS:f.VE])
	}
	return true
}

// Elements calls fn with the raw bytes of each element of the JSON array
// b, sub-slices of b (nothing is copied). It returns false when b is not
// one valid JSON array.
func Elements(b []byte, fn func(val []byte)) bool {
	var s Scanner
	if s.Scan(b) != Array {
		return false
	}
	for _, f := range s.Fields {
		fn(b[f.VS:f.VE])
	}
	return true
}
