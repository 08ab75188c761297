package plan

import (
	"fmt"
	"strings"
)

// MaxSteps is the number of steps kept from a plan; later ones are dropped.
const MaxSteps = 30

// Step is one step of a plan. JSON key order: id, text, dependsOn, agent.
type Step struct {
	ID        string   `json:"id"`
	Text      string   `json:"text"`
	DependsOn []string `json:"dependsOn,omitempty"`
	Agent     string   `json:"agent,omitempty"`
}

var (
	checkboxRE     = lazyRE(`^ ?[-*+]` + space + `+\[[ xX~]\]` + space + `+(` + notEOL + `+)$`)
	numberedRE     = lazyRE(`^ ?(\d{1,3})[.)]` + space + `+(` + notEOL + `+)$`)
	stepIDRE       = lazyRE(`^(S\d{1,3})\b[.:)]?` + space + `*`)
	headingRE      = lazyRE(`^#{1,6}` + space + `+(` + notEOL + `*)$`)
	headingLevelRE = lazyRE(`^(#+)` + space)
	stepsHeadingRE = lazyRE(`(?i)步骤|steps|implementation|实施|执行`)
	annotationRE   = lazyRE(`(?i)\[(depends|agent)` + space + `*:` + space + `*([^\]]*)\]`)
	dependsSepRE   = lazyRE(`(?:[,\x{FF0C}]|` + space + `)+`)
	spaceRunRE     = lazyRE(space + `{2,}`)
)

// ParseSteps returns the steps of a plan's markdown (section 7.3), never
// nil. Lines inside fenced code blocks are ignored.
//
// Checkbox items ("- [ ] ...", at most one leading space) anywhere are the
// steps if there is at least one. Otherwise the numbered items ("1. ...",
// "2) ...") under the first heading whose text mentions steps,
// implementation, 步骤, 实施 or 执行, up to the next heading of the same or a
// higher level, are the steps; without such a heading, every numbered item
// is.
//
// A leading S<1-3 digits> token (optionally followed by ".", ":" or ")")
// is the step id and is removed from the text; otherwise the id is
// S<position> for checkbox items and S<number> for numbered items. An id
// already taken becomes S<position>, then gets "'" appended until unique.
// [depends: A, B] and [agent: x] annotations fill DependsOn and Agent and
// are removed from the text; whitespace runs are collapsed and an empty
// text becomes the id. Only the first MaxSteps steps are kept; dropping
// more yields a warning.
func ParseSteps(markdown string) (steps []Step, warnings []string) {
	var lines []string
	for _, line := range unfenced(splitLines(markdown)) {
		lines = append(lines, line)
	}
	raw := checkboxItems(lines)
	if len(raw) == 0 {
		raw = numberedItems(stepsSection(lines))
	}
	if len(raw) > MaxSteps {
		warnings = append(warnings, fmt.Sprintf("the plan has %d steps; only the first %d are kept", len(raw), MaxSteps))
		raw = raw[:MaxSteps]
	}
	steps = make([]Step, 0, len(raw))
	seen := make(map[string]bool, len(raw))
	for i, item := range raw {
		id := item.id
		if id == "" || seen[id] {
			id = fmt.Sprintf("S%d", i+1)
		}
		for seen[id] {
			id += "'"
		}
		seen[id] = true
		steps = append(steps, annotate(id, item.text))
	}
	return steps, warnings
}

// rawItem is a list item before ids are made unique; id may be empty.
type rawItem struct{ id, text string }

func checkboxItems(lines []string) []rawItem {
	var items []rawItem
	for _, line := range lines {
		if m := checkboxRE().FindStringSubmatch(line); m != nil {
			items = append(items, splitID(m[1]))
		}
	}
	return items
}

func numberedItems(lines []string) []rawItem {
	var items []rawItem
	for _, line := range lines {
		if m := numberedRE().FindStringSubmatch(line); m != nil {
			item := splitID(m[2])
			if item.id == "" {
				item.id = "S" + m[1]
			}
			items = append(items, item)
		}
	}
	return items
}

// stepsSection returns the lines under the first steps heading up to the
// next heading of the same or a higher level, or all lines when there is
// no steps heading.
func stepsSection(lines []string) []string {
	for i, line := range lines {
		t := trim(line)
		m := headingRE().FindStringSubmatch(t)
		if m == nil || !stepsHeadingRE().MatchString(m[1]) {
			continue
		}
		level := len(t) - len(strings.TrimLeft(t, "#"))
		rest := lines[i+1:]
		for j, l := range rest {
			if h := headingLevelRE().FindStringSubmatch(trim(l)); h != nil && len(h[1]) <= level {
				return rest[:j]
			}
		}
		return rest
	}
	return lines
}

// splitID takes a leading S<digits> id off an item's text.
func splitID(text string) rawItem {
	t := trim(text)
	if m := stepIDRE().FindStringSubmatch(t); m != nil {
		return rawItem{id: m[1], text: t[len(m[0]):]}
	}
	return rawItem{text: t}
}

// annotate builds the step: annotations go to DependsOn/Agent (the last
// non-empty one of each kind wins) and are removed from the text.
func annotate(id, text string) Step {
	step := Step{ID: id}
	text = annotationRE().ReplaceAllStringFunc(text, func(a string) string {
		m := annotationRE().FindStringSubmatch(a)
		if strings.EqualFold(m[1], "depends") {
			var ids []string
			for _, d := range dependsSepRE().Split(m[2], -1) {
				if d = trim(d); d != "" {
					ids = append(ids, d)
				}
			}
			if len(ids) > 0 {
				step.DependsOn = ids
			}
		} else if agent := trim(m[2]); agent != "" {
			step.Agent = agent
		}
		return ""
	})
	step.Text = trim(spaceRunRE().ReplaceAllString(text, " "))
	if step.Text == "" {
		step.Text = id
	}
	return step
}
