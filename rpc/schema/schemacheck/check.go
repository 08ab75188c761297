package schemacheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	v6 "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/armadra/ama-rpc/rpc/acp"
	"github.com/armadra/ama-rpc/rpc/schema"
)

const url = "https://github.com/armadra/ama-rpc/schema/rpc.schema.json"

type compiled struct {
	line, command, print *v6.Schema
	session              *v6.Schema            // one line of a session file
	acp                  map[string]*v6.Schema // by extension name
	method               map[string]bool       // extension methods
	err                  error
}

var (
	once sync.Once
	c    compiled
)

func load() *compiled {
	once.Do(func() {
		doc, err := schema.JSON()
		if err != nil {
			c.err = err
			return
		}
		v, err := v6.UnmarshalJSON(bytes.NewReader(doc))
		if err != nil {
			c.err = err
			return
		}
		comp := v6.NewCompiler()
		if err := comp.AddResource(url, v); err != nil {
			c.err = err
			return
		}
		at := func(frag string) *v6.Schema {
			s, err := comp.Compile(url + frag)
			if err != nil && c.err == nil {
				c.err = fmt.Errorf("compile %s: %w", frag, err)
			}
			return s
		}
		c.line, c.command, c.print = at(""), at("#/$defs/command"), at("#/$defs/"+schema.PrintLine)
		c.session = at("#/$defs/" + schema.SessionLineDef)
		c.acp, c.method = map[string]*v6.Schema{}, map[string]bool{}
		for _, e := range acp.Extensions() {
			c.acp[e.Name] = at("#/$defs/" + schema.ACPDef(e.Name))
			c.method[e.Name] = e.Method
		}
	})
	return &c
}

func validate(s *v6.Schema, line []byte) error {
	return memo(s.Location, line, func() error {
		v, err := v6.UnmarshalJSON(bytes.NewReader(line))
		if err != nil {
			return fmt.Errorf("not JSON: %w", err)
		}
		return s.Validate(v)
	})
}

// valid holds the lines that passed a check (the check's name, NUL, the
// line): a check is a function of the bytes alone, and the tests check
// many lines byte for byte again (a replay re-sends numbered lines; the
// golden harness's deterministic clock and ids make hello, responses,
// events and session entries recur across runs), so each distinct line
// passes each check once per process. Lines over maxMemo are checked
// every time rather than kept.
var valid sync.Map

const maxMemo = 16 << 10

// memo runs check unless line already passed the check called name.
func memo(name string, line []byte, check func() error) error {
	if len(line) > maxMemo {
		return check()
	}
	key := name + "\x00" + string(line)
	if _, ok := valid.Load(key); ok {
		return nil
	}
	err := check()
	if err == nil {
		valid.Store(key, struct{}{})
	}
	return err
}

// RPCLine validates one output line of the native protocol.
func RPCLine(line []byte) error {
	c := load()
	if c.err != nil {
		return c.err
	}
	return validate(c.line, line)
}

// Command validates one input line of the native protocol.
func Command(line []byte) error {
	c := load()
	if c.err != nil {
		return c.err
	}
	return validate(c.command, line)
}

// PrintLine validates one stdout line of print mode (json, stream-json).
func PrintLine(line []byte) error {
	c := load()
	if c.err != nil {
		return c.err
	}
	return validate(c.print, line)
}

// SessionLine validates one line of a session file (the header or an
// entry).
func SessionLine(line []byte) error {
	c := load()
	if c.err != nil {
		return c.err
	}
	return validate(c.session, line)
}

// IsSessionFile reports whether content is a session file: its first
// line is a header (type "session").
func IsSessionFile(content []byte) bool {
	return bytes.HasPrefix(content, []byte(`{"type":"session"`))
}

// SessionFile validates every complete line of a session file and
// returns one error per failing line (at most max), with its number. A
// last line without its newline (a write cut by a crash, which the store
// repairs) and a line that is not JSON are the store's repair's business,
// not the schema's: they are skipped.
func SessionFile(content []byte, max int) []error {
	var errs []error
	lines := bytes.Split(content, []byte("\n"))
	for i, l := range lines[:len(lines)-1] {
		if len(bytes.TrimSpace(l)) == 0 || !json.Valid(l) {
			continue
		}
		if err := SessionLine(l); err != nil {
			errs = append(errs, fmt.Errorf("line %d: %w", i+1, err))
			if len(errs) == max {
				break
			}
		}
	}
	return errs
}

// ACPLine validates ama-rpc's extensions in one ACP message: every value
// of a _meta key named "ama" or "ama/…" against its definition (an
// unknown one is an undescribed extension), and the params of a method
// whose name starts with "_" (an unknown one likewise). The rest is ACP's
// own schema's business.
func ACPLine(line []byte) error {
	c := load()
	if c.err != nil {
		return c.err
	}
	return memo("acp", line, func() error { return c.acpLine(line) })
}

func (c *compiled) acpLine(line []byte) error {
	// Decoded as the validator reads JSON (json.Number numbers), so its
	// parts are validated as they are.
	var msg any
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if err := dec.Decode(&msg); err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	var errs []string
	if m, ok := msg.(map[string]any); ok {
		if method, ok := m["method"].(string); ok && strings.HasPrefix(method, "_") {
			if s, ok := c.acp[method]; !ok || !c.method[method] {
				errs = append(errs, fmt.Sprintf("extension method %s is not described (acp.Extensions)", method))
			} else if err := s.Validate(m["params"]); err != nil {
				errs = append(errs, fmt.Sprintf("%s params: %v", method, err))
			}
		}
	}
	walkMeta(msg, "", func(path, key string, v any) {
		if key != acp.MetaAma && !strings.HasPrefix(key, "ama/") {
			return
		}
		s, ok := c.acp[key]
		if !ok || c.method[key] {
			errs = append(errs, fmt.Sprintf("%s._meta[%q] is not described (acp.Extensions)", path, key))
			return
		}
		if err := s.Validate(v); err != nil {
			errs = append(errs, fmt.Sprintf("%s._meta[%q]: %v", path, key, err))
		}
	})
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return nil
}

// walkMeta calls f for every member of every _meta object in v.
func walkMeta(v any, path string, f func(path, key string, v any)) {
	switch x := v.(type) {
	case map[string]any:
		if meta, ok := x["_meta"].(map[string]any); ok {
			for k, mv := range meta {
				f(path, k, mv)
			}
		}
		for k, c := range x {
			if k != "_meta" {
				walkMeta(c, path+"."+k, f)
			}
		}
	case []any:
		for i, c := range x {
			walkMeta(c, fmt.Sprintf("%s[%d]", path, i), f)
		}
	}
}
