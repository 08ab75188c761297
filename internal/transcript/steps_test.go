package transcript

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeTarget answers each sent line by echoing it on its output, as a
// server would write a response.
type fakeTarget struct {
	root, work string
	out        *Output
	w          *io.PipeWriter
	sent       []string
	signals    []syscall.Signal
	closed     bool
}

func newFake(t *testing.T) *fakeTarget {
	root := t.TempDir()
	work := filepath.Join(root, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	r, w := io.Pipe()
	f := &fakeTarget{root: root, work: work, out: NewOutput(), w: w}
	go f.out.Collect(r)
	t.Cleanup(func() { _ = w.Close() })
	return f
}

func (f *fakeTarget) Send(b []byte) error {
	f.sent = append(f.sent, string(b))
	if strings.HasPrefix(string(b), "{") {
		_, err := f.w.Write(b) // echo: the line is its own answer
		return err
	}
	return nil
}
func (f *fakeTarget) CloseInput()                 { f.closed = true }
func (f *fakeTarget) Output() *Output             { return f.out }
func (f *fakeTarget) Signal(s syscall.Signal)     { f.signals = append(f.signals, s) }
func (f *fakeTarget) MergedDeltas() (int64, bool) { return 0, false }
func (f *fakeTarget) Root() string                { return f.root }
func (f *fakeTarget) Work() string                { return f.work }

// The step runner: substitution, waits on native and JSON-RPC responses,
// binds, files, gates, signals and close, in order.
func TestPlay(t *testing.T) {
	script := `# a comment
{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s-1"}}
{"@wait":{"id":"1"}}
{"@bind":{"SID":{"id":"1","path":"result.sessionId"}}}
{"type":"response","id":"x","cwd":"$WORK","sid":"$SID"}
{"@wait":{"id":"x","contains":"s-1"}}
{"@raw":"raw bytes"}
{"@file":{"Path":"a.txt","Content":"changed"}}
{"@release":"go"}
{"@signal":"SIGTERM"}
{"@close":true}
`
	steps, err := ParseSteps(strings.NewReader(script))
	if err != nil {
		t.Fatal(err)
	}
	f := newFake(t)
	closed, err := Play(f, steps, map[string]string{"WORK": f.work}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !closed || !f.closed {
		t.Error("@close did not close the input")
	}
	if len(f.sent) != 3 || !strings.Contains(f.sent[1], `"cwd":"`+f.work+`","sid":"s-1"`) || f.sent[2] != "raw bytes" {
		t.Errorf("sent %q", f.sent)
	}
	if b, err := os.ReadFile(filepath.Join(f.work, "a.txt")); err != nil || string(b) != "changed" {
		t.Errorf("@file: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(f.root, "go")); err != nil {
		t.Errorf("@release: %v", err)
	}
	if len(f.signals) != 1 || f.signals[0] != syscall.SIGTERM {
		t.Errorf("signals %v", f.signals)
	}
}

// What a script may not do fails with the step named: leave the work
// directory or the root, an unknown directive, a wait never met.
func TestPlayRefuses(t *testing.T) {
	for _, tc := range []struct{ script, says string }{
		{`{"@file":{"Path":"../outside.txt","Content":"x"}}`, "@file"},
		{`{"@release":"../gate"}`, "@release"},
		{`{"@nap":1}`, "unknown directive @nap"},
		{`{"@bind":{"X":{"id":"9","path":"a"}}}`, "no line"},
	} {
		f := newFake(t)
		steps, err := ParseSteps(strings.NewReader(tc.script))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Play(f, steps, map[string]string{}, time.Second); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v", tc.script, err)
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(f.root), "outside.txt")); err == nil {
			t.Fatalf("%s: wrote outside the work directory", tc.script)
		}
	}
	f := newFake(t)
	_ = f.w.Close() // the output ends: the wait fails at once
	steps, _ := ParseSteps(strings.NewReader(`{"@wait":{"type":"never"}}`))
	if _, err := Play(f, steps, nil, 5*time.Second); err == nil || !strings.Contains(err.Error(), "output ended: true") {
		t.Errorf("a wait after the end: %v", err)
	}
}

// A stalled Output stops reading: the writer blocks until Resume.
func TestOutputStall(t *testing.T) {
	r, w := io.Pipe()
	o := NewOutput()
	o.Stall()
	go o.Collect(r)
	wrote := make(chan struct{})
	go func() {
		_, _ = w.Write([]byte("{\"type\":\"a\"}\n"))
		close(wrote)
	}()
	select {
	case <-wrote:
		t.Fatal("a stalled output read the line")
	case <-time.After(50 * time.Millisecond):
	}
	o.Resume()
	if _, err := o.WaitFor("a", 1, 5*time.Second, func(ob *Object) bool { return ob.String("type") == "a" }); err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
	o.Drained()
	if l, ok := o.Line(1, time.Second); ok {
		t.Errorf("a second line: %s", l)
	}
}

// WaitFor counts from the first line on every call, over lines parsed
// once (Output.object): each call sees every line's own object, lines
// that are not a JSON object never match, and lines that arrive between
// calls are parsed when reached.
func TestOutputWaitForCounts(t *testing.T) {
	r, w := io.Pipe()
	o := NewOutput()
	go o.Collect(r)
	typ := func(want string) func(*Object) bool {
		return func(ob *Object) bool { return ob.String("type") == want }
	}
	_, _ = w.Write([]byte("{\"type\":\"a\",\"n\":1}\nnot json\n[1]\n{\"type\":\"b\"}\n{\"type\":\"a\",\"n\":2}\n"))
	for range 2 {
		for n, want := range map[int]int{1: 0, 2: 4} {
			if i, err := o.WaitFor("a", n, 5*time.Second, typ("a")); err != nil || i != want {
				t.Fatalf("a #%d: line %d (%v), want %d", n, i, err, want)
			}
		}
		if i, err := o.WaitFor("b", 1, 5*time.Second, typ("b")); err != nil || i != 3 {
			t.Fatalf("b: line %d (%v), want 3", i, err)
		}
	}
	go func() { _, _ = w.Write([]byte("{\"type\":\"a\",\"n\":3}\n")); _ = w.Close() }()
	if i, err := o.WaitFor("a", 3, 5*time.Second, typ("a")); err != nil || i != 5 {
		t.Fatalf("a #3: line %d (%v), want 5", i, err)
	}
	if _, err := o.WaitFor("a", 4, 5*time.Second, typ("a")); err == nil {
		t.Fatal("a #4 found")
	}
}
