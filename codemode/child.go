package codemode

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"
	"golang.org/x/sys/unix"

	"github.com/armadra/ama-rpc/internal/jsonline"
)

// ChildArg is the hidden first argument that turns an ama-rpc process
// (or a test binary linking this package) into a script process.
const ChildArg = "__codemode-child"

func init() {
	if len(os.Args) >= 2 && os.Args[1] == ChildArg {
		os.Exit(childMain(os.Stdin, os.Stdout))
	}
}

//go:embed prelude.js
var preludeSrc string

// prelude is compiled when a script process first needs it: a package
// variable would compile it in every ama-rpc process at start (0.2 MB in
// 3,400 allocations of package initialisation), and only the child runs
// scripts.
var prelude = sync.OnceValue(func() *goja.Program { return goja.MustCompile("prelude", preludeSrc, true) })

// errMemory is the interrupt value of the heap watchdog.
type errMemory struct{ mb int }

// childMain runs one script: it reads the run message, executes it on a
// goja runtime owned by this goroutine, exchanges tool calls with the
// parent and ends with a done message. The process's data segment is
// capped (RLIMIT_DATA) so a script that outgrows the heap watchdog dies
// instead of taking the machine's memory.
func childMain(in io.Reader, out io.Writer) int {
	start := time.Now()
	lines := jsonline.NewReader(in, jsonline.MaxLine)
	first, err := lines.Next()
	var run runMsg
	if err != nil || json.Unmarshal(first, &run) != nil || run.Type != "run" {
		return 3
	}
	limitMemory(run.MaxHeapMB)
	w := jsonline.NewWriter(out)
	results := make(chan resultMsg, 16)
	go func() {
		defer close(results)
		for line, err := lines.Next(); err == nil; line, err = lines.Next() {
			var m resultMsg
			if json.Unmarshal(line, &m) == nil && m.Type == "tool_result" {
				results <- m
			}
		}
	}()
	ok, errText := runScript(&run, w, results)
	_ = w.Write(childMsg{Type: "done", OK: ok, Error: errText, ElapsedMs: time.Since(start).Milliseconds()})
	return 0
}

// limitMemory caps the process: the Go runtime's soft limit makes the
// collector work hard near the cap, RLIMIT_DATA (private writable
// mappings: the Go heap and stacks) is the hard wall above it.
func limitMemory(mb int) {
	if mb <= 0 {
		return
	}
	limit := int64(mb) << 20
	debug.SetMemoryLimit(limit)
	hard := uint64(limit)*2 + 128<<20 // the runtime's own mappings and one doubling's slack
	_ = unix.Setrlimit(unix.RLIMIT_DATA, &unix.Rlimit{Cur: hard, Max: hard})
}

var (
	scriptLine = regexp.MustCompile(`script:(\d+):`)
	syntaxLine = regexp.MustCompile(`Line (\d+):`)
	importUse  = regexp.MustCompile(`\bimport\b`)
)

// runScript is the event loop: the script runs until it awaits, then each
// tool result settles its promise (which runs the continuations) until the
// script's promise settles.
func runScript(run *runMsg, w *jsonline.Writer, results <-chan resultMsg) (bool, string) {
	vm := goja.New()
	vm.SetMaxCallStackSize(2000)
	harden(vm)
	stop := watchHeap(vm, run.MaxHeapMB)
	defer stop()

	type pending struct{ resolve, reject func(any) error }
	waiting := map[int]pending{}
	nextID, calls := 0, 0
	host := vm.NewObject()
	_ = host.Set("call", func(name, args string) goja.Value {
		p, resolve, reject := vm.NewPromise()
		calls++
		if run.MaxCalls > 0 && calls > run.MaxCalls {
			_ = reject(vm.NewGoError(fmt.Errorf("codemode: a script may make at most %d tool calls", run.MaxCalls)))
			return vm.ToValue(p)
		}
		nextID++
		waiting[nextID] = pending{resolve, reject}
		_ = w.Write(childMsg{Type: "tool_call", ID: nextID, Name: name, Input: json.RawMessage(args)})
		return vm.ToValue(p)
	})
	_ = host.Set("out", func(text string) { _ = w.Write(childMsg{Type: "output", Text: text}) })
	names := make([]string, len(run.Tools))
	decls := vm.NewObject()
	for i, t := range run.Tools {
		names[i] = t.Name
		_ = decls.Set(t.Name, t.Declaration)
	}
	store := vm.NewObject()
	for k, v := range run.Store {
		var x any
		if json.Unmarshal(v, &x) == nil {
			_ = store.Set(k, x)
		}
	}
	pv, err := vm.RunProgram(prelude())
	if err != nil {
		return false, "codemode prelude failed: " + err.Error()
	}
	init, _ := goja.AssertFunction(pv)
	apiV, err := init(goja.Undefined(), host, vm.ToValue(names), decls, store)
	if err != nil {
		return false, "codemode prelude failed: " + err.Error()
	}
	api := apiV.ToObject(vm)
	finish, _ := goja.AssertFunction(api.Get("finish"))
	errorParts, _ := goja.AssertFunction(api.Get("errorParts"))
	snapshot, _ := goja.AssertFunction(api.Get("snapshot"))

	describe := func(reason goja.Value) string {
		parts, err := errorParts(goja.Undefined(), reason)
		if err != nil {
			return reason.String()
		}
		var p []string
		if vm.ExportTo(parts, &p) != nil || len(p) != 3 {
			return reason.String()
		}
		text := p[1]
		if p[0] != "" {
			text = p[0] + ": " + p[1]
		}
		if m := scriptLine.FindStringSubmatch(p[2]); m != nil {
			if n, _ := strconv.Atoi(m[1]); n > 1 {
				text += fmt.Sprintf(" (line %d)", n-1)
			}
		}
		return text + hint(p[0], p[1], names)
	}
	failed := func(err error) (bool, string) {
		var ie *goja.InterruptedError
		if errors.As(err, &ie) {
			if m, ok := ie.Value().(errMemory); ok {
				return false, memoryText(m.mb)
			}
			return false, fmt.Sprint(ie.Value())
		}
		var ex *goja.Exception
		if errors.As(err, &ex) {
			return false, describe(ex.Value())
		}
		var se *goja.CompilerSyntaxError
		if errors.As(err, &se) {
			text := "SyntaxError: " + se.Message
			if m := syntaxLine.FindStringSubmatch(se.Error()); m != nil {
				n, _ := strconv.Atoi(m[1])
				text += fmt.Sprintf(" (line %d)", max(n-1, 1))
			}
			if importUse.MatchString(run.Script) {
				text += "\nOnly tools.<name>(args) is available in codemode: no require/import, process, fetch or timers."
			}
			return false, text
		}
		return false, err.Error()
	}

	_ = w.Write(childMsg{Type: "ready"}) // the script's deadline starts now
	prog, err := goja.Compile("script", "(async () => {\n"+run.Script+"\n})()", false)
	if err != nil {
		return failed(err)
	}
	sv, err := vm.RunProgram(prog)
	if err != nil {
		return failed(err)
	}
	fv, err := finish(goja.Undefined(), sv)
	if err != nil {
		return failed(err)
	}
	done, _ := fv.Export().(*goja.Promise)
	if done == nil {
		return false, "codemode: the script did not start"
	}
	for done.State() == goja.PromiseStatePending {
		if len(waiting) == 0 {
			return false, "Error: the script is waiting for a promise that nothing will settle"
		}
		m, ok := <-results
		if !ok {
			return false, "Script aborted: parent closed the channel"
		}
		p, known := waiting[m.ID]
		if !known {
			continue
		}
		delete(waiting, m.ID)
		if m.OK {
			err = p.resolve(string(m.Value))
		} else {
			err = p.reject(vm.NewGoError(errors.New(m.Error)))
		}
		if err != nil {
			return failed(err)
		}
	}
	if done.State() == goja.PromiseStateRejected {
		return false, describe(done.Result())
	}
	snap, err := snapshot(goja.Undefined())
	if err != nil {
		return failed(err)
	}
	if !goja.IsUndefined(snap) {
		var entries map[string]string
		if err := vm.ExportTo(snap, &entries); err == nil {
			out := make(map[string]json.RawMessage, len(entries))
			for k, v := range entries {
				out[k] = json.RawMessage(v)
			}
			_ = w.Write(childMsg{Type: "store", Entries: out})
		}
	}
	return true, ""
}

// harden removes what could turn strings into code (eval, the Function
// constructors). This is defence in depth: the runtime has no host object
// besides the globals the prelude defines, so code made from a string
// could do no more than the script itself.
func harden(vm *goja.Runtime) {
	g := vm.GlobalObject()
	_ = g.Delete("eval")
	// Each kind of function separately: a runtime without one (async
	// generators) must not leave the others open.
	for _, maker := range []string{"(function () {})", "(async function () {})", "(function* () {})", "(async function* () {})"} {
		_, _ = vm.RunString(`(function () {
  "use strict";
  const deny = function () { throw new EvalError("code generation from strings is disabled in codemode"); };
  Object.defineProperty(Object.getPrototypeOf(` + maker + `), "constructor", { value: deny, writable: false, configurable: false });
})()`)
	}
	_, _ = vm.RunString(`Object.defineProperty(globalThis, "Function", { value: function () { throw new EvalError("code generation from strings is disabled in codemode"); }, writable: false, configurable: false, enumerable: false })`)
}

// watchHeap interrupts the script when the live heap passes the cap. It
// samples every 2 ms; a single allocation larger than what is left hits
// RLIMIT_DATA (limitMemory) and ends the process instead.
func watchHeap(vm *goja.Runtime, mb int) (stop func()) {
	if mb <= 0 {
		return func() {}
	}
	limit := uint64(mb) << 20
	done := make(chan struct{})
	go func() {
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			metrics.Read(sample)
			if sample[0].Value.Kind() == metrics.KindUint64 && sample[0].Value.Uint64() > limit {
				vm.Interrupt(errMemory{mb})
				return
			}
		}
	}()
	return func() { close(done) }
}

func memoryText(mb int) string {
	return fmt.Sprintf("Script exceeded the codemode memory limit (%d MB); process the data in smaller pieces", mb)
}

var forbidden = regexp.MustCompile(`\b(require|import|process|fetch|setTimeout|setInterval|setImmediate|queueMicrotask|XMLHttpRequest|WebSocket|Deno|Bun)\b`)

// hint is the line appended to a script error that shows a misuse of the
// runtime.
func hint(name, msg string, callable []string) string {
	if name == "ReferenceError" && strings.HasSuffix(msg, " is not defined") {
		x := strings.TrimSuffix(msg, " is not defined")
		for _, n := range callable {
			if n == x {
				return fmt.Sprintf("\nCall tools as tools.%s({...}), not %s(...).", x, x)
			}
		}
	}
	if forbidden.MatchString(msg) {
		return "\nOnly tools.<name>(args) is available in codemode: no require/import, process, fetch or timers."
	}
	return ""
}
