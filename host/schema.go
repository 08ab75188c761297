package host

import (
	"encoding/json"
	"fmt"
	"sort"
)

// CheckSchema checks a parameters schema against the JSON-Schema subset
// host tools may use (spec §4.2) and returns the problems. The bridge runs
// the same check inside create(); this one guards --host-cmd hosts.
// Hand-written: the subset is a whitelist of keywords, which no schema
// library offers.
func CheckSchema(raw json.RawMessage) []string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return []string{"$: not JSON: " + err.Error()}
	}
	var problems []string
	checkNode(v, "$", &problems)
	return problems
}

var schemaTypes = map[string]bool{"object": true, "string": true, "number": true, "integer": true, "boolean": true, "array": true}

func checkNode(v any, at string, problems *[]string) {
	s, ok := v.(map[string]any)
	if !ok {
		*problems = append(*problems, at+": schema must be an object")
		return
	}
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	add := func(f string, a ...any) { *problems = append(*problems, at+": "+fmt.Sprintf(f, a...)) }
	for _, k := range keys {
		val := s[k]
		switch k {
		case "type":
			if t, ok := val.(string); !ok || !schemaTypes[t] {
				add("unsupported type %v", val)
			}
		case "title", "description":
			if _, ok := val.(string); !ok {
				add("%q must be a string", k)
			}
		case "default":
		case "properties":
			props, ok := val.(map[string]any)
			if !ok {
				add(`"properties" must be an object`)
				continue
			}
			names := make([]string, 0, len(props))
			for n := range props {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				checkNode(props[n], at+".properties."+n, problems)
			}
		case "required":
			list, ok := val.([]any)
			if !ok {
				add(`"required" must be an array of strings`)
				continue
			}
			props, _ := s["properties"].(map[string]any)
			for _, r := range list {
				name, ok := r.(string)
				if !ok {
					add(`"required" must be an array of strings`)
					break
				}
				if props != nil {
					if _, ok := props[name]; !ok {
						add("required property %q is not declared", name)
					}
				}
			}
		case "additionalProperties":
			if _, ok := val.(bool); !ok {
				add(`"additionalProperties" must be a boolean`)
			}
		case "items":
			checkNode(val, at+".items", problems)
		case "enum":
			list, ok := val.([]any)
			if !ok || len(list) == 0 {
				add(`"enum" must be a non-empty array`)
				continue
			}
			for _, e := range list {
				switch e.(type) {
				case string, float64, bool, nil:
				default:
					add(`"enum" members must be strings, numbers, booleans or null`)
				}
			}
		default:
			add("unsupported keyword %q", k)
		}
	}
}
