package transcript

import (
	"sort"
	"strings"
)

// Substitute replaces each $NAME of a script line with vars[NAME] (the
// goldens' and the replay kit's bound values, @bind), longer names first
// so $REQ does not eat the start of $REQ2.
func Substitute(line string, vars map[string]string) string {
	names := make([]string, 0, len(vars))
	for k := range vars {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool { return len(names[i]) > len(names[j]) })
	for _, k := range names {
		line = strings.ReplaceAll(line, "$"+k, vars[k])
	}
	return line
}
