package store_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/store"
)

// Environment of the crash-test child (see crash_test.go): the test binary
// re-executes itself with these set and runs crashChild instead of tests.
const (
	envCrashFile = "AMA_STORE_CRASH_FILE"
	envCrashN    = "AMA_STORE_CRASH_N" // appends to make; 0 = until killed
)

func TestMain(m *testing.M) {
	if path := os.Getenv(envCrashFile); path != "" {
		crashChild(path)
		os.Exit(0)
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		cleanupBench()
		os.Exit(code)
	}))
}

// crashChild opens the session, appends entries one per Append call and
// reports each on stdout ("<n>\n"). With a positive count it then prints
// "done" and blocks on stdin until the parent kills it.
func crashChild(path string) {
	n, _ := strconv.Atoi(os.Getenv(envCrashN))
	f, snap, err := store.Open(path, store.OpenOptions{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(2)
	}
	out := bufio.NewWriter(os.Stdout)
	parent := snap.LeafID
	for i := 1; n <= 0 || i <= n; i++ {
		id := fmt.Sprintf("c%07d", i)
		e := msgEntry(id, parent, fmt.Sprintf("crash entry %d", i))
		if err := f.Append(e); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(3)
		}
		parent = &e.ID
		fmt.Fprintln(out, i)
		out.Flush()
	}
	fmt.Fprintln(out, "done")
	out.Flush()
	_, _ = io.Copy(io.Discard, os.Stdin) // wait to be killed
	os.Exit(0)
}

func ptr(s string) *string { return &s }

const testTime = "2026-10-01T00:00:01.000Z"

// msgEntry returns a user message entry with id, parent and a fixed time.
func msgEntry(id string, parent *string, text string) *store.Entry {
	e := store.MessageEntry(llm.NewUser(text, 1, ""))
	e.ID, e.ParentID, e.Timestamp = id, parent, testTime
	return e
}

// withIDs sets the id fields of e.
func withIDs(e *store.Entry, id string, parent *string) *store.Entry {
	e.ID, e.ParentID, e.Timestamp = id, parent, testTime
	return e
}

func testHeader(id string) store.Header {
	h := store.NewHeader(id, mustTime("2026-10-02T05:23:11.123Z"), "/work/proj", "0.0.0-test")
	return h
}

// chain returns n user-message entries e1..en, each the child of the
// previous.
func chain(n int) []*store.Entry {
	var out []*store.Entry
	var parent *string
	for i := 1; i <= n; i++ {
		e := msgEntry(fmt.Sprintf("e%d", i), parent, fmt.Sprintf("message %d", i))
		parent = &e.ID
		out = append(out, e)
	}
	return out
}

func ids(entries []*store.Entry) []string {
	out := []string{}
	for _, e := range entries {
		out = append(out, e.ID)
	}
	return out
}

// lines returns the JSON lines of entries.
func lines(t testing.TB, entries []*store.Entry) []string {
	t.Helper()
	var out []string
	for _, e := range entries {
		out = append(out, string(e.AppendJSON(nil)))
	}
	return out
}

func readBytes(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// copyTo copies src into dir and returns the new path.
func copyTo(t testing.TB, src, dir string) string {
	t.Helper()
	dst := filepath.Join(dir, filepath.Base(src))
	if err := os.WriteFile(dst, readBytes(t, src), 0o600); err != nil {
		t.Fatal(err)
	}
	return dst
}

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}
