package tools

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/armadra/ama-rpc/internal/childenv"
)

// DefaultKillGrace is how long a process group has between SIGTERM and
// SIGKILL.
const DefaultKillGrace = 2 * time.Second

// shells caches defaultShell by directory (a session's cwd).
var shells sync.Map

// defaultShell is bash from PATH, else /bin/sh, found outside dir
// (childenv.LookPath): a bash planted in the project's .venv/bin would run
// the judged command text as it likes, outside any verdict.
func defaultShell(dir string) string {
	if v, ok := shells.Load(dir); ok {
		return v.(string)
	}
	sh := "/bin/sh"
	if p, err := childenv.LookPath("bash", dir); err == nil {
		sh = p
	}
	shells.Store(dir, sh)
	return sh
}

// shellOf returns the shell of the session: Env.Shell, else bash from PATH
// (outside the session's directory), else /bin/sh.
func shellOf(env *Env) string {
	if env != nil && env.Shell != "" {
		return env.Shell
	}
	if env != nil {
		return defaultShell(env.Cwd)
	}
	return defaultShell("")
}

// newShellCmd prepares `<shell> -c command` in dir as the leader of its own
// process group, with stdin from the null device and the given complete
// environment (nil: CommandEnv of this process's environment).
func newShellCmd(shell, command, dir string, environ []string) *exec.Cmd {
	cmd := exec.Command(shell, "-c", command)
	cmd.Dir = dir
	if environ == nil {
		environ = childenv.Environ(EnvPolicy{})
	}
	cmd.Env = environ
	cmd.Stdin = nil // the null device
	setProcessGroup(cmd)
	return cmd
}

// stopGroup ends the process group led by pid: SIGTERM, then SIGKILL when
// done is not closed within grace. SIGKILL is sent in any case, for
// members that outlive the leader.
func stopGroup(pid int, done <-chan struct{}, grace time.Duration) {
	stopWith(func(s syscall.Signal) {
		if s == syscall.SIGKILL {
			killGroup(pid)
		} else {
			terminateGroup(pid)
		}
	}, done, grace)
}

// stopWith ends a process group through signal: SIGTERM, then SIGKILL
// after grace unless done was closed first.
func stopWith(signal func(syscall.Signal), done <-chan struct{}, grace time.Duration) {
	if grace <= 0 {
		grace = DefaultKillGrace
	}
	signal(syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
	signal(syscall.SIGKILL)
}

var ansiRE = regexp.MustCompile(`\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]`)

// cleanOutput makes terminal output readable as text: invalid UTF-8 is
// replaced, ANSI escape sequences are removed and a line redrawn with "\r"
// (progress bars) keeps only its last state.
func cleanOutput(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if strings.IndexByte(s, 0x1b) >= 0 {
		s = ansiRE.ReplaceAllString(s, "")
	}
	if strings.IndexByte(s, '\r') < 0 {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		l = strings.TrimSuffix(l, "\r")
		if k := strings.LastIndexByte(l, '\r'); k >= 0 {
			l = l[k+1:]
		}
		lines[i] = l
	}
	return strings.Join(lines, "\n")
}

// Memory bounds of captured command output.
const (
	sinkMemLimit = 1 << 20   // output kept whole in memory up to this size
	sinkTailKeep = 256 << 10 // tail kept in memory once output went to a file
)

// outputSink collects combined command output. Small output stays in
// memory; larger output goes to a file under Env.OutputDir while only the
// tail stays in memory. It is safe for concurrent use.
type outputSink struct {
	env    *Env
	prefix string
	chars  int // the result's character budget (Call.Limit)
	keep   int // bytes of tail kept once spilled: enough for chars of ASCII

	mu       sync.Mutex
	buf      []byte // everything, or the tail once spilled
	file     *os.File
	saveErr  error
	total    int64
	newlines int
	lastByte byte
	dirty    bool
}

func newOutputSink(env *Env, prefix string, chars int) *outputSink {
	return &outputSink{env: env, prefix: prefix, chars: chars, keep: max(sinkTailKeep, chars)}
}

func (s *outputSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(p) == 0 {
		return 0, nil
	}
	s.total += int64(len(p))
	s.newlines += strings.Count(string(p), "\n")
	s.lastByte = p[len(p)-1]
	s.dirty = true
	if s.file == nil && s.saveErr == nil && len(s.buf)+len(p) > sinkMemLimit {
		s.file, s.saveErr = s.env.createOutputFile(s.prefix)
		if s.file != nil {
			if _, err := s.file.Write(s.buf); err != nil {
				s.saveErr = err
			}
		}
	}
	if s.file != nil && s.saveErr == nil {
		if _, err := s.file.Write(p); err != nil {
			s.saveErr = err
		}
	}
	s.buf = append(s.buf, p...)
	if (s.file != nil || s.saveErr != nil) && len(s.buf) > 2*s.keep {
		s.buf = append(s.buf[:0], s.buf[len(s.buf)-s.keep:]...)
	}
	return len(p), nil
}

// takeDirty reports whether output arrived since the last call.
func (s *outputSink) takeDirty() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.dirty
	s.dirty = false
	return d
}

// snapshot returns the cleaned tail of the output so far (at most
// MaxResultChars characters), for progress updates.
func (s *outputSink) snapshot() string {
	s.mu.Lock()
	b := s.buf
	if len(b) > 4*MaxResultChars {
		b = b[len(b)-4*MaxResultChars:]
	}
	raw := string(b)
	s.mu.Unlock()
	return tailRunes(cleanOutput(raw), MaxResultChars)
}

// finish closes the sink and returns the text for the result: the whole
// cleaned output when it fits the budget and MaxOutputLines, else its
// tail with a note naming the file holding the full output.
func (s *outputSink) finish() (text string, cut bool, fullPath string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	raw := string(s.buf)
	if s.file != nil {
		fullPath = s.file.Name()
		if err := s.file.Close(); err != nil && s.saveErr == nil {
			s.saveErr = err
		}
	}
	clean := cleanOutput(raw)
	whole := s.file == nil && s.saveErr == nil
	if whole && utf8.RuneCountInString(clean) <= s.chars {
		if _, more := lastLines(clean, MaxOutputLines); !more {
			return clean, false, ""
		}
	}
	if whole {
		fullPath, s.saveErr = s.env.SaveOutput(s.prefix, raw)
	}
	tail, _ := lastLines(clean, MaxOutputLines)
	tail = tailRunes(tail, s.chars-300)
	totalLines := s.newlines
	if s.lastByte != '\n' {
		totalLines++
	}
	where := "full output saved to " + fullPath
	if s.saveErr != nil {
		where, fullPath = "the full output could not be saved", ""
	}
	shownLines := strings.Count(tail, "\n")
	if !strings.HasSuffix(tail, "\n") {
		shownLines++
	}
	note := fmt.Sprintf("[output cut: showing the last %d of %d lines (%s in all); %s]\n",
		shownLines, totalLines, formatBytes(s.total), where)
	return note + tail, true, fullPath
}
