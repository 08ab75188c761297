// Package utf8cut cuts strings to a byte budget on rune boundaries, so a
// cut never leaves half a character (which the wire would then show as
// U+FFFD). Pure functions, safe for concurrent use; a leaf that imports
// only the standard library.
package utf8cut
