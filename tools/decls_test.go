package tools_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
)

const promptGolden = "../../shared/reference/ama-goldens/rpc/prompt.out.jsonl"

// node is a JSON value that remembers object key order.
type node struct {
	keys   []string // object keys in order; nil for non-objects
	fields map[string]*node
	items  []*node // array items
	isArr  bool
	scalar any
}

func parseOrdered(data []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return parseNode(dec)
}

func parseNode(dec *json.Decoder) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		n := &node{keys: []string{}, fields: map[string]*node{}}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			k := kt.(string)
			v, err := parseNode(dec)
			if err != nil {
				return nil, err
			}
			n.keys = append(n.keys, k)
			n.fields[k] = v
		}
		_, err := dec.Token() // }
		return n, err
	case json.Delim('['):
		n := &node{isArr: true}
		for dec.More() {
			v, err := parseNode(dec)
			if err != nil {
				return nil, err
			}
			n.items = append(n.items, v)
		}
		_, err := dec.Token() // ]
		return n, err
	}
	return &node{scalar: tok}, nil
}

// sameShape compares ours with ref: identical keys in identical order,
// identical values, except that a "description" string only has to be a
// string (and must not be the reference's text).
func sameShape(ref, ours *node, path string) []string {
	switch {
	case ref.keys != nil:
		if ours.keys == nil {
			return []string{path + ": want an object"}
		}
		if strings.Join(ref.keys, ",") != strings.Join(ours.keys, ",") {
			return []string{fmt.Sprintf("%s: keys %v, want %v", path, ours.keys, ref.keys)}
		}
		var out []string
		for _, k := range ref.keys {
			r, o := ref.fields[k], ours.fields[k]
			if k == "description" {
				if rs, ok := r.scalar.(string); ok {
					os, ok := o.scalar.(string)
					switch {
					case !ok:
						out = append(out, path+".description: want a string")
					case os == rs:
						out = append(out, path+".description: copied from the reference; use our own words")
					}
					continue
				}
			}
			out = append(out, sameShape(r, o, path+"."+k)...)
		}
		return out
	case ref.isArr:
		if !ours.isArr || len(ours.items) != len(ref.items) {
			return []string{path + ": array differs"}
		}
		var out []string
		for i := range ref.items {
			out = append(out, sameShape(ref.items[i], ours.items[i], fmt.Sprintf("%s[%d]", path, i))...)
		}
		return out
	}
	if fmt.Sprint(ref.scalar) != fmt.Sprint(ours.scalar) || ours.keys != nil || ours.isArr {
		return []string{fmt.Sprintf("%s: %v, want %v", path, ours.scalar, ref.scalar)}
	}
	return nil
}

// referenceTools reads toolsAdded from the third entry_appended line of
// the reference prompt golden.
func referenceTools(t *testing.T) *node {
	t.Helper()
	f, err := os.Open(promptGolden)
	if err != nil {
		t.Skipf("reference golden not available (%v); skipping the shape comparison", err)
	}
	defer f.Close()
	br := bufio.NewReader(f)
	seen := 0
	for {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var head struct {
				Type  string `json:"type"`
				Entry struct {
					Message struct {
						ToolsAdded json.RawMessage `json:"toolsAdded"`
					} `json:"message"`
				} `json:"entry"`
			}
			if json.Unmarshal(line, &head) == nil && head.Type == "entry_appended" {
				seen++
				if seen == 3 {
					n, perr := parseOrdered(head.Entry.Message.ToolsAdded)
					if perr != nil || !n.isArr {
						t.Fatalf("toolsAdded of the 3rd entry_appended line: %v", perr)
					}
					return n
				}
			}
		}
		if err == io.EOF {
			t.Fatalf("%s: fewer than 3 entry_appended lines", promptGolden)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestDeclsMatchReferenceShape(t *testing.T) {
	ref := referenceTools(t)
	ours := map[string]*node{}
	for _, d := range registry.Decls() {
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		n, err := parseOrdered(b)
		if err != nil {
			t.Fatal(err)
		}
		ours[d.Name] = n
	}
	var refNames []string
	for _, rt := range ref.items {
		name, _ := rt.fields["name"].scalar.(string)
		refNames = append(refNames, name)
		o, ok := ours[name]
		if !ok {
			t.Errorf("tool %q of the reference is missing", name)
			continue
		}
		for _, p := range sameShape(rt, o, name) {
			t.Error(p)
		}
		delete(ours, name)
	}
	// ls and todo are ama-rpc's opt-in tools (not active by default).
	if len(ours) != 2 || ours["ls"] == nil || ours["todo"] == nil {
		t.Errorf("extra tools besides the reference's %v: %v", refNames, ours)
	}
	// The reference lists its tools sorted by name, as Default does.
	var got []string
	for _, n := range registry.Names() {
		if n != "ls" && n != "todo" {
			got = append(got, n)
		}
	}
	if strings.Join(got, ",") != strings.Join(refNames, ",") {
		t.Errorf("order %v, want %v", got, refNames)
	}
}
