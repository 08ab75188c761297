package alias

import "testing"

func TestStringSharesBytes(t *testing.T) {
	b := []byte("hello world")
	s := String(b[6:])
	if s != "world" || IDOf(s) != IDOf(String(b[6:])) {
		t.Fatalf("%q", s)
	}
	if off, ok := Offset(s, b); !ok || off != 6 {
		t.Fatalf("offset %d %v", off, ok)
	}
	if _, ok := Offset("world", b); ok {
		t.Fatal("a string elsewhere lies within b")
	}
	if _, ok := Offset(String(b[:0]), b); ok {
		t.Fatal("an empty string lies within b")
	}
	if got := Bytes(s); &got[0] != &b[6] || len(got) != 5 {
		t.Fatal("Bytes copied")
	}
	if got := Slice(Ptr(b), len(b)); &got[0] != &b[0] || len(got) != len(b) {
		t.Fatal("Slice(Ptr) is not b")
	}
	if Ptr(nil) != nil {
		t.Fatal("Ptr(nil) is not nil")
	}
	if IDOf(s) == IDOf(string(b[6:])) {
		t.Fatal("a copy has the ID of the original")
	}
}
