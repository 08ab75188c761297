package replaykit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/armadra/ama-rpc/internal/ownfs"
	"github.com/armadra/ama-rpc/internal/transcript"
)

// Case is a case file (`ama-rpc replay --case`): the case.json of the
// golden fixtures under test/fixtures, one format for ama-rpc's own tests
// and a host's.
type Case struct {
	Args   []string          `json:"args"`
	Env    map[string]string `json:"env,omitempty"`
	Script json.RawMessage   `json:"script,omitempty"`
	Files  map[string]string `json:"files,omitempty"`
	// Copy creates work files from files on disk: work path -> path
	// relative to the fixtures directory (Load's base; host adapters).
	Copy map[string]string `json:"copy,omitempty"`
	// Dirs, Links and Fifos shape the file system before the start (see
	// Options).
	Dirs  []string          `json:"dirs,omitempty"`
	Links map[string]string `json:"links,omitempty"`
	Fifos []string          `json:"fifos,omitempty"`
	// Absent lists paths relative to the run's root that must not exist
	// after the run, Expect files (relative to the root) and the content
	// they must have: the side effects, checked besides the transcript.
	Absent []string          `json:"absent,omitempty"`
	Expect map[string]string `json:"expect,omitempty"`
	// Config is the user config file content.
	Config json.RawMessage `json:"config,omitempty"`
	Keep   transcript.Keep `json:"keep"`
	// Normalize is the normaliser style (A, B, C, F or T; default A).
	Normalize string `json:"normalize,omitempty"`
	// Zero lists extra keys normalised to 0.
	Zero []string `json:"zero,omitempty"`
	// Exit is the expected exit code (default 0).
	Exit int `json:"exit,omitempty"`
	// Requires names machine features the case needs: "node" (a host
	// adapter), "sandbox" (the Landlock sandbox with namespaces). The kit
	// runs the case anyway; without them its transcript differs.
	Requires []string `json:"requires,omitempty"`
	// Writer bounds the output queue (stall tests).
	MaxQueuedItems int `json:"maxQueuedItems,omitempty"`
	MaxQueuedBytes int `json:"maxQueuedBytes,omitempty"`
	// SessionFile is the content of a session file opened with
	// --session <session>; \xNN stands for the raw byte NN (invalid UTF-8).
	SessionFile string `json:"sessionFile,omitempty"`
	// TelemetryStepMs advances the throughput clock by this much per
	// reading (default 0: a frozen clock, so no telemetry_tick).
	TelemetryStepMs int `json:"telemetryStepMs,omitempty"`
}

// DecodeCase reads a case file strictly (an unknown member is an error).
func DecodeCase(data []byte) (Case, error) {
	var c Case
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Case{}, fmt.Errorf("case: %w", err)
	}
	return c, nil
}

// Options returns the replay options of the case; Copy's files are read
// from under fixtures.
func (c *Case) Options(fixtures string) (Options, error) {
	files := map[string]string{}
	for k, v := range c.Files {
		files[k] = v
	}
	for dst, src := range c.Copy {
		b, err := ownfs.ReadUser(filepath.Join(fixtures, src), maxFile)
		if err != nil {
			return Options{}, fmt.Errorf("case copy %s: %w", dst, err)
		}
		files[dst] = string(b)
	}
	o := Options{Args: c.Args, Env: c.Env, Files: files, Dirs: c.Dirs, Links: c.Links, Fifos: c.Fifos,
		Absent: c.Absent, Expect: c.Expect, Keep: c.Keep, Style: c.Normalize, Zero: c.Zero,
		MaxQueuedItems: c.MaxQueuedItems, MaxQueuedBytes: c.MaxQueuedBytes,
		TelemetryStep: time.Duration(c.TelemetryStepMs) * time.Millisecond}
	if len(c.Script) > 0 {
		o.Script = c.Script
	}
	if len(c.Config) > 0 {
		o.UserConfig = c.Config
	}
	if c.SessionFile != "" {
		o.SessionFile = RawBytes(c.SessionFile)
	}
	return o, nil
}

// RawBytes turns the \xNN escapes of s into bytes.
func RawBytes(s string) []byte {
	var out []byte
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && s[i+1] == 'x' {
			if b, err := strconv.ParseUint(s[i+2:i+4], 16, 8); err == nil {
				out = append(out, byte(b))
				i += 3
				continue
			}
		}
		out = append(out, s[i])
	}
	return out
}

// PrintCase is a print-mode case (test/fixtures/print): a Case plus what
// goes to stdin, which is then closed, and a signal sent once a line of a
// type was written or the fake model got that many requests.
type PrintCase struct {
	Case
	Stdin     string `json:"stdin,omitempty"`
	Interrupt *struct {
		After      string `json:"after,omitempty"`
		AfterCalls int    `json:"afterCalls,omitempty"`
		Signal     int    `json:"signal"`
	} `json:"interrupt,omitempty"`
}

// Steps are the print case's stdin and interrupt as script steps.
func (p *PrintCase) Steps() []Step {
	var steps []Step
	add := func(directive string, arg any) {
		a, _ := json.Marshal(arg)
		steps = append(steps, Step{Directive: directive, Arg: a})
	}
	if p.Stdin != "" {
		add("@raw", p.Stdin)
	}
	add("@close", nil)
	if in := p.Interrupt; in != nil {
		if in.After != "" {
			add("@wait", map[string]string{"type": in.After})
		}
		if in.AfterCalls > 0 {
			add("@waitCalls", in.AfterCalls)
		}
		add("@signal", map[int]string{2: "SIGINT", 15: "SIGTERM"}[in.Signal])
	}
	return steps
}
