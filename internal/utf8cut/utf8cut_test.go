package utf8cut

import (
	"testing"
	"unicode/utf8"
)

// Head and Tail keep whole runes within the budget, as long as they can.
func TestHeadTail(t *testing.T) {
	s := "aé€😀b" // 1, 2, 3, 4, 1 bytes
	heads := map[int]string{0: "", 1: "a", 2: "a", 3: "aé", 5: "aé", 6: "aé€", 9: "aé€", 10: "aé€😀", 11: s, 99: s}
	for n, want := range heads {
		if got := Head(s, n); got != want {
			t.Errorf("Head(%d) = %q, want %q", n, got, want)
		}
	}
	tails := map[int]string{0: "", 1: "b", 4: "b", 5: "😀b", 7: "😀b", 8: "€😀b", 10: "é€😀b", 11: s}
	for n, want := range tails {
		if got := Tail(s, n); got != want {
			t.Errorf("Tail(%d) = %q, want %q", n, got, want)
		}
	}
}

func FuzzHeadTail(f *testing.F) {
	f.Add("aé€😀b", 3)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 0 || !utf8.ValidString(s) {
			return
		}
		h, tl := Head(s, n), Tail(s, n)
		if len(h) > n && len(h) != len(s) || !utf8.ValidString(h) || s[:len(h)] != h ||
			len(tl) > n && len(tl) != len(s) || !utf8.ValidString(tl) || s[len(s)-len(tl):] != tl {
			t.Fatalf("Head/Tail(%q, %d) = %q, %q", s, n, h, tl)
		}
	})
}
