package golden_test

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/armadra/ama-rpc/store"
)

// crashKills is the number of SIGKILLs of TestCrashConsistency:
// AMA_CRASH_KILLS (the 100: AMA_CRASH_KILLS=100 go test -run
// CrashConsistency ./golden), else 20, the bounded run of make test.
func crashKills() int {
	if n, err := strconv.Atoi(os.Getenv("AMA_CRASH_KILLS")); err == nil && n > 0 {
		return n
	}
	return 20
}

// Issue 36, crash consistency: a scripted run (fake model) with tools
// (read, write, bash), entries from a few bytes to over 1 MiB (the sizes
// around the reader's 32 KiB chunks, the spill threshold and the direct
// write of a huge body in pieces), compaction, fork and rewind is killed
// with SIGKILL after a random number of stdout lines; then every session
// file opens for writing (the reader repairs a torn tail; the stale lock
// is taken over), --resume opens the main session, and every entry
// announced on stdout before the kill is in a session file. The kill
// points come from a fixed seed (AMA_CRASH_SEED changes it); the property
// holds for any point, so timing differences cannot make it flake.
func TestCrashConsistency(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and spawns the binary many times")
	}
	bin := buildBinary(t)
	seed := uint64(36)
	if s, err := strconv.ParseUint(os.Getenv("AMA_CRASH_SEED"), 10, 64); err == nil {
		seed = s
	}
	rng := rand.New(rand.NewPCG(seed, 0))
	kills := crashKills()
	total := 0 // stdout lines of a whole run, measured by the first trial
	for trial := 0; trial <= kills; trial++ {
		killAt := 0 // the first trial runs to the end
		if trial > 0 {
			killAt = 1 + rng.IntN(max(total, 1))
		}
		size := []int{40 << 10, 33 << 10, 200 << 10, 1<<20 + 4096, 64}[rng.IntN(5)]
		if trial == 0 {
			size = 1<<20 + 4096
		}
		n := crashTrial(t, bin, trial, killAt, size)
		if trial == 0 {
			total = n
			if total < 40 {
				t.Fatalf("a whole run wrote only %d lines", total)
			}
			t.Logf("a whole run writes %d stdout lines; %d kills follow", total, kills)
		}
		if t.Failed() {
			t.Fatalf("trial %d (kill after line %d of %d, prompt of %d bytes) failed; AMA_CRASH_SEED=%d", trial, killAt, total, size, seed)
		}
	}
}

// crashTrial runs the scenario once, killing the process after killAt
// stdout lines (0: never), checks the files, and returns how many lines
// it read.
func crashTrial(t *testing.T, bin string, trial, killAt, size int) int {
	home, work := t.TempDir(), t.TempDir()
	var file strings.Builder
	for file.Len() < 48_000 {
		file.WriteString("row \"q\" \\ é 😀 <&>\t" + strings.Repeat("y", file.Len()%40) + "\n")
	}
	if err := os.WriteFile(filepath.Join(work, "big.txt"), []byte(file.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	written := strings.Repeat("w\"\\\n", 9<<10) // a 36 KiB write: the tool call's arguments are a large entry too
	args, _ := json.Marshal(map[string]string{"path": "out.txt", "content": written})
	script := `[{"steps":[{"text":"reading","chunkSize":3},{"toolCall":{"name":"read","arguments":{"path":"big.txt"},"id":"c1"}}]},
		{"steps":[{"toolCall":{"name":"write","arguments":` + string(args) + `,"id":"c2"}},{"toolCall":{"name":"bash","arguments":{"command":"echo hi"},"id":"c3"}}]},
		{"steps":[{"text":"done one","chunkSize":2}]},
		{"text":"second answer"},
		{"text":"summary of the work so far"},
		{"text":"after the fork"},
		{"text":"after the rewind"}]`
	scriptPath := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(scriptPath, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"AMA_FAKE_SCRIPT=" + scriptPath, "AMA_SANDBOX=off"}
	id := fmt.Sprintf("c0a5e1d2-0000-4000-8000-%012d", trial)
	p := startKproc(t, bin, home, work, env, "--model", "fake/echo", "--permission-mode", "full-auto", "--session-id", id)

	lines := 0
	killed := false
	var announced []string
	// step sends line (if any) and reads until stop; it reports false
	// once the process has been killed.
	step := func(line string, stop func(map[string]any) bool) (map[string]any, bool) {
		if killed {
			return nil, false
		}
		if line != "" {
			p.send(line)
		}
		var last map[string]any
		p.until(func(v map[string]any) bool {
			lines++
			last = v
			if v["type"] == "entry_appended" {
				announced = append(announced, v["entry"].(map[string]any)["id"].(string))
			}
			if killAt > 0 && lines >= killAt {
				_ = p.cmd.Process.Signal(syscall.SIGKILL)
				killed = true
				return true
			}
			return stop(v)
		})
		return last, !killed
	}
	settled := func(v map[string]any) bool { return v["type"] == "agent_settled" }
	response := func(rid string) func(map[string]any) bool {
		return func(v map[string]any) bool { return v["type"] == "response" && v["id"] == rid }
	}
	prompt, _ := json.Marshal(map[string]any{"id": "p1", "type": "prompt", "message": strings.Repeat("prompt \"x\" \\ ü\n", size/16+1)[:size]})
	scenario := func() {
		if _, ok := step(string(prompt), settled); !ok {
			return
		}
		if _, ok := step(`{"id":"p2","type":"prompt","message":"next"}`, settled); !ok {
			return
		}
		if v, ok := step(`{"id":"c","type":"compact"}`, response("c")); !ok {
			return
		} else if v["success"] != true {
			t.Errorf("compact: %v", v)
		}
		v, ok := step(`{"id":"fm","type":"get_fork_messages"}`, response("fm"))
		if !ok {
			return
		}
		msgs, _ := v["data"].(map[string]any)["messages"].([]any)
		if len(msgs) == 0 {
			t.Errorf("no fork points: %v", v)
			return
		}
		entry := msgs[len(msgs)-1].(map[string]any)["entryId"].(string)
		if v, ok := step(`{"id":"fk","type":"fork","entryId":"`+entry+`"}`, response("fk")); !ok {
			return
		} else if v["success"] != true {
			t.Errorf("fork: %v", v)
		}
		if _, ok := step(`{"id":"p3","type":"prompt","message":"in the fork"}`, settled); !ok {
			return
		}
		v, ok = step(`{"id":"rp","type":"get_rewind_points"}`, response("rp"))
		if !ok {
			return
		}
		pts, _ := v["data"].(map[string]any)["points"].([]any)
		if len(pts) == 0 {
			t.Errorf("no rewind points: %v", v)
			return
		}
		point := pts[0].(map[string]any)["entryId"].(string)
		if v, ok := step(`{"id":"rw","type":"rewind","mode":"both","entryId":"`+point+`"}`, response("rw")); !ok {
			return
		} else if v["success"] != true {
			t.Errorf("rewind: %v", v)
		}
		step(`{"id":"p4","type":"prompt","message":"after rewind"}`, settled)
	}
	scenario()
	if !killed {
		_ = p.stdin.Close()
	}
	_ = p.cmd.Wait()

	// Every session file opens for writing (what --resume does), and
	// together they hold every announced entry.
	have := map[string]bool{}
	nfiles := 0
	_ = filepath.WalkDir(home, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, store.FileSuffix) {
			return nil
		}
		nfiles++
		f, snap, err := store.Open(path, store.OpenOptions{})
		if err != nil {
			t.Errorf("trial %d: %s does not open after the kill: %v", trial, filepath.Base(path), err)
			return nil
		}
		_ = f.Close()
		for _, e := range snap.Entries {
			have[e.ID] = true
		}
		return nil
	})
	for _, eid := range announced {
		if !have[eid] {
			t.Errorf("trial %d: entry %s was announced before the kill but is in no session file (%d files)", trial, eid, nfiles)
		}
	}
	if len(announced) > 0 {
		r := startKproc(t, bin, home, work, env, "--model", "fake/echo", "--resume", id)
		r.send(`{"id":"e","type":"get_entries"}`)
		got := r.until(func(v map[string]any) bool { return v["id"] == "e" })
		if resp := got[len(got)-1]; resp["success"] != true {
			t.Errorf("trial %d: --resume after the kill: %v", trial, resp)
		}
		_ = r.stdin.Close()
		if err := r.cmd.Wait(); err != nil {
			t.Errorf("trial %d: resumed process: %v\n%s", trial, err, r.stderr)
		}
	}
	return lines
}
