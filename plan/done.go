package plan

import (
	"regexp"
	"strings"
	"sync"
)

// doneRE matches one line of the [DONE:<step id>] convention (section 7.7).
var doneRE = lazyRE(`^[ \t]*\[DONE:` + space + `*([A-Za-z0-9_.-]{1,32})` + space + `*\][ \t]*$`)

// lineBreakRE splits text at JavaScript line terminators, where a
// multiline ^ and $ match.
var lineBreakRE = lazyRE(`[\n\r\x{2028}\x{2029}]`)

// lazyRE compiles a regular expression when it is first used: plan's
// expressions use the JavaScript space class and compiled at package
// initialisation cost every ama-rpc start 0.1 MB in 1,400 allocations,
// though only plans need them.
func lazyRE(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// DoneIDs returns the step ids of the lines of text that consist of
// [DONE:<id>] (surrounding spaces and tabs allowed), in order of first
// appearance, without case-insensitive duplicates. text is the assistant's
// text blocks joined with "\n".
func DoneIDs(text string) []string {
	var ids []string
	seen := map[string]bool{}
	for _, line := range lineBreakRE().Split(text, -1) {
		m := doneRE().FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if key := strings.ToLower(m[1]); !seen[key] {
			seen[key] = true
			ids = append(ids, m[1])
		}
	}
	return ids
}

// ApplyDone marks as done every item that has a planStep, is not done yet,
// and whose planStep or id equals one of ids (ignoring case). If that
// changed anything and no item is in_progress afterwards, the first pending
// item becomes in_progress. out is a new list (never nil); changed reports
// whether it differs from items, i.e. whether an ama.todo entry is due.
func ApplyDone(items []TodoItem, ids []string) (out []TodoItem, changed bool) {
	out = cloneItems(items)
	if len(ids) == 0 {
		return out, false
	}
	wanted := make(map[string]bool, len(ids))
	for _, id := range ids {
		wanted[strings.ToLower(id)] = true
	}
	for i, it := range out {
		if it.PlanStep == "" || it.Status == TodoDone {
			continue
		}
		if wanted[strings.ToLower(it.PlanStep)] || wanted[strings.ToLower(it.ID)] {
			out[i].Status = TodoDone
			changed = true
		}
	}
	if !changed {
		return out, false
	}
	for _, it := range out {
		if it.Status == TodoInProgress {
			return out, true
		}
	}
	for i, it := range out {
		if it.Status == TodoPending {
			out[i].Status = TodoInProgress
			break
		}
	}
	return out, true
}
