package transcript

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Step is one line of an input script (a fixture's in.jsonl, the replay
// kit's stdin): a command line sent as it is (after $NAME substitution),
// or a directive, an object whose single key starts with "@".
type Step struct {
	Raw       []byte
	Directive string
	Arg       json.RawMessage
}

// ParseSteps reads a script; blank lines and lines starting with # are
// skipped. A line that is not a JSON object is a command line too (a
// script may send a malformed line on purpose).
func ParseSteps(r io.Reader) ([]Step, error) {
	var steps []Step
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		st := Step{Raw: append([]byte(nil), line...)}
		var m map[string]json.RawMessage
		if json.Unmarshal(line, &m) == nil && len(m) == 1 {
			for k, v := range m {
				if strings.HasPrefix(k, "@") {
					st.Directive, st.Arg = k, v
				}
			}
		}
		steps = append(steps, st)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read script: %w", err)
	}
	return steps, nil
}

// Target is the running server a script drives.
type Target interface {
	// Send writes bytes to the server's stdin as they are.
	Send(b []byte) error
	// CloseInput ends the server's stdin.
	CloseInput()
	// Output is what the server wrote so far.
	Output() *Output
	// Signal delivers sig as the process's signal handler would.
	Signal(sig syscall.Signal)
	// MergedDeltas is the writer's count of merged deltas (false while
	// the server has not started or the target cannot tell).
	MergedDeltas() (int64, bool)
	// Root is the run's temporary root (the fake model's record and
	// @release gates live there), Work the server's cwd.
	Root() string
	Work() string
}

// Directives are the @-directives Play knows.
var Directives = []string{"@wait", "@waitCalls", "@waitMerged", "@bind", "@raw", "@file", "@release", "@close", "@stall", "@resume", "@signal"}

// Play runs the steps against t: the one step interpreter of the golden
// tests and the replay kit. $NAME in a command line is replaced by vars
// (which @bind extends). timeout bounds each wait. It reports whether a
// @close ended the input.
func Play(t Target, steps []Step, vars map[string]string, timeout time.Duration) (closed bool, err error) {
	for _, st := range steps {
		c, err := step(t, st, vars, timeout)
		if err != nil {
			return closed, err
		}
		closed = closed || c
	}
	return closed, nil
}

func decode(st Step, v any) error {
	if err := json.Unmarshal(st.Arg, v); err != nil {
		return fmt.Errorf("%s %s: %w", st.Directive, st.Arg, err)
	}
	return nil
}

func step(t Target, st Step, vars map[string]string, timeout time.Duration) (closed bool, err error) {
	switch st.Directive {
	case "":
		return false, t.Send([]byte(Substitute(string(st.Raw), vars) + "\n"))
	case "@raw":
		var s string
		if err := decode(st, &s); err != nil {
			return false, err
		}
		return false, t.Send([]byte(s))
	case "@wait":
		var w struct {
			Type  string `json:"type"`
			ID    string `json:"id"`
			Count int    `json:"count"`
			Has   string `json:"contains"`
		}
		if err := decode(st, &w); err != nil {
			return false, err
		}
		if w.Count == 0 {
			w.Count = 1
		}
		_, err := t.Output().WaitFor(string(st.Arg), w.Count, timeout, func(o *Object) bool {
			if w.ID != "" {
				if id, ok := IDOf(o); !ok || id != w.ID || !IsResponse(o) {
					return false
				}
			}
			if w.Type != "" && o.String("type") != w.Type {
				return false
			}
			return w.Has == "" || bytes.Contains(Encode(o), []byte(w.Has))
		})
		return false, err
	case "@bind":
		var b map[string]struct {
			Type string `json:"type"`
			ID   string `json:"id"`
			Path string `json:"path"`
		}
		if err := decode(st, &b); err != nil {
			return false, err
		}
		for name, spec := range b {
			v, err := Bind(t.Output().Lines(), spec.Type, spec.ID, spec.Path)
			if err != nil {
				return false, err
			}
			vars[name] = v
		}
	case "@file": // the user changes a file behind the agent's back
		var f struct{ Path, Content string }
		if err := decode(st, &f); err != nil {
			return false, err
		}
		// Through os.Root: a script's name does not leave the work
		// directory.
		if err := inRoot(t.Work(), func(r *os.Root) error { return r.WriteFile(f.Path, []byte(f.Content), 0o644) }); err != nil {
			return false, fmt.Errorf("@file: %w", err)
		}
	case "@release": // open a waitFile gate of the fake script
		var name string
		if err := decode(st, &name); err != nil {
			return false, err
		}
		if err := inRoot(t.Root(), func(r *os.Root) error { return r.WriteFile(name, nil, 0o644) }); err != nil {
			return false, fmt.Errorf("@release: %w", err)
		}
	case "@waitCalls": // the fake model has received this many requests
		// (parent and child sessions share one script consumed in call
		// order; this pins which session gets which response)
		var n int
		if err := decode(st, &n); err != nil {
			return false, err
		}
		return false, Poll(strconv.Itoa(n)+" fake model requests", timeout, func() bool {
			var data []byte
			_ = inRoot(t.Root(), func(r *os.Root) error {
				var err error
				data, err = r.ReadFile("fake-record.jsonl")
				return err
			})
			return bytes.Count(data, []byte("\n")) >= n
		})
	case "@waitMerged": // the writer has merged this many deltas
		var n int64
		if err := decode(st, &n); err != nil {
			return false, err
		}
		return false, Poll(strconv.FormatInt(n, 10)+" merged deltas", timeout, func() bool {
			m, ok := t.MergedDeltas()
			return ok && m >= n
		})
	case "@close":
		t.CloseInput()
		return true, nil
	case "@stall":
		t.Output().Stall()
	case "@resume":
		t.Output().Resume()
	case "@signal":
		var sig string
		if err := decode(st, &sig); err != nil {
			return false, err
		}
		s := syscall.SIGINT
		if sig == "SIGTERM" {
			s = syscall.SIGTERM
		}
		t.Signal(s)
	default:
		return false, fmt.Errorf("unknown directive %s (known: %s)", st.Directive, strings.Join(Directives, ", "))
	}
	return false, nil
}

func inRoot(dir string, f func(*os.Root) error) error {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer r.Close()
	return f(r)
}

// IDOf is a line's id as text: a native response's id, or a JSON-RPC
// message's (number or string).
func IDOf(o *Object) (string, bool) {
	v, ok := o.Get("id")
	if !ok {
		return "", false
	}
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number:
		return string(x), true
	}
	return "", false
}

// IsResponse reports whether o is a response: a native one (type
// response) or a JSON-RPC one (jsonrpc without method).
func IsResponse(o *Object) bool {
	if o.String("type") == "response" {
		return true
	}
	_, method := o.Get("method")
	_, jsonrpc := o.Get("jsonrpc")
	return jsonrpc && !method
}

// Bind returns the string at path (dot separated, numbers index arrays)
// of the last line of the given type (any when "") and id (any when "").
func Bind(lines [][]byte, typ, id, path string) (string, error) {
	for i := len(lines) - 1; i >= 0; i-- {
		v, err := Parse(lines[i])
		if err != nil {
			continue
		}
		o, ok := v.(*Object)
		if !ok || (typ != "" && o.String("type") != typ) {
			continue
		}
		if lid, _ := IDOf(o); id != "" && lid != id {
			continue
		}
		var cur Value = o
		for _, part := range strings.Split(path, ".") {
			switch c := cur.(type) {
			case *Object:
				cur = c.Values[part]
			case []Value:
				n, err := strconv.Atoi(part)
				if err != nil || n < 0 || n >= len(c) {
					return "", fmt.Errorf("@bind %s: bad index %s", path, part)
				}
				cur = c[n]
			}
		}
		s, ok := cur.(string)
		if !ok {
			return "", fmt.Errorf("@bind %s: not a string: %s", path, Encode(cur))
		}
		return s, nil
	}
	return "", fmt.Errorf("@bind: no line of type %q id %q", typ, id)
}
