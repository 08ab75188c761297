package printmode

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"golang.org/x/sys/unix"

	"github.com/armadra/ama-rpc/internal/i18n"
)

// ErrNoPrompt is a print run with neither prompt words nor stdin text.
var ErrNoPrompt = errors.New("-p needs a prompt (positional argument or stdin pipe)")

// PromptInput is where a print run's prompt comes from.
type PromptInput struct {
	// Words are the positional arguments; "-" reads stdin to its end.
	Words []string
	// Stdin is the process's stdin (an *os.File in production).
	Stdin io.Reader
	// NoStdin never reads stdin (--no-stdin).
	NoStdin bool
	// Getenv reads AMA_STDIN_WAIT_MS.
	Getenv func(string) string
	// Stderr receives the stdin notices.
	Stderr io.Writer
	// HintAfter is when the "waiting for stdin" line is written (zero: 3 s).
	HintAfter time.Duration
	// Ctx ends a wait for stdin (a signal; nil: none).
	Ctx context.Context
	// Lang is the language of the stdin notices ("": English).
	Lang i18n.Lang
	// Lead is set when prompt text comes from elsewhere as well (--from,
	// whose text goes before the words): stdin is then read as it is next
	// to prompt words, and an empty result is not ErrNoPrompt (the caller
	// decides once it has the whole prompt, JoinPrompt).
	Lead bool
}

// ReadPrompt assembles the prompt: the words joined by one space, and the
// stdin text without its trailing white space, joined by a blank line when
// both are there (print-mode.md §2). Which stdin is read:
//
//   - a terminal, or NoStdin: none;
//   - a regular file or a device (/dev/null): to its end, it cannot hang;
//   - a pipe (or any reader that is not a file) with no words, or a word
//     "-": to its end, with one stderr line when nothing ended it in 3 s;
//   - a pipe with words: only when its first byte comes within
//     AMA_STDIN_WAIT_MS (default 2000, 0: never), then to its end.
func ReadPrompt(in PromptInput) (string, error) {
	var words []string
	explicit := false
	for _, w := range in.Words {
		if w == "-" {
			explicit = true
			continue
		}
		words = append(words, w)
	}
	text := strings.Join(words, " ")
	stdin := ""
	if !in.NoStdin && in.Stdin != nil {
		var err error
		if stdin, err = readStdin(in, explicit || (len(words) == 0 && !in.Lead)); err != nil {
			return "", fmt.Errorf("reading stdin: %w", err)
		}
	}
	stdin = strings.TrimRightFunc(stdin, unicode.IsSpace)
	prompt := JoinPrompt(text, stdin)
	if prompt == "" && !in.Lead {
		return "", ErrNoPrompt
	}
	return prompt, nil
}

// JoinPrompt joins the parts of a prompt that are not blank with a blank
// line between two ("" when every part is blank).
func JoinPrompt(parts ...string) string {
	var keep []string
	for _, p := range parts {
		if strings.TrimSpace(p) != "" {
			keep = append(keep, p)
		}
	}
	return strings.Join(keep, "\n\n")
}

func readStdin(in PromptInput, toEnd bool) (string, error) {
	if f, ok := in.Stdin.(*os.File); ok {
		fi, err := f.Stat()
		if err != nil {
			return "", err
		}
		switch {
		case fi.Mode()&os.ModeCharDevice != 0:
			if isTerminal(f) {
				return "", nil // a terminal: nobody pipes a prompt
			}
			fallthrough // /dev/null and other devices
		case fi.Mode().IsRegular():
			b, err := io.ReadAll(f)
			return string(b), err
		}
	}
	p := startPipe(in.Stdin)
	var stop <-chan struct{}
	if in.Ctx != nil {
		stop = in.Ctx.Done()
	}
	if !toEnd {
		wait := stdinWait(in.Getenv)
		if wait == 0 {
			return "", nil
		}
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-p.first:
		case <-stop:
			return "", context.Cause(in.Ctx)
		case <-t.C:
			fmt.Fprintln(in.Stderr, i18n.T(in.Lang, i18n.PrintNoPipedInput, waitText(wait, in.Lang)))
			return "", nil
		}
	}
	hint := in.HintAfter
	if hint <= 0 {
		hint = 3 * time.Second
	}
	t := time.NewTimer(hint)
	defer t.Stop()
	select {
	case <-p.done:
	case <-stop:
		return "", context.Cause(in.Ctx)
	case <-t.C:
		fmt.Fprintln(in.Stderr, i18n.T(in.Lang, i18n.PrintWaitingStdin))
		select {
		case <-p.done:
		case <-stop:
			return "", context.Cause(in.Ctx)
		}
	}
	return p.text()
}

// stdinWait is AMA_STDIN_WAIT_MS (default 2 s; an invalid value is the
// default; 0 never reads).
func stdinWait(getenv func(string) string) time.Duration {
	const def = 2 * time.Second
	if getenv == nil {
		return def
	}
	v := strings.TrimSpace(getenv("AMA_STDIN_WAIT_MS"))
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return def
	}
	return time.Duration(n) * time.Millisecond
}

func waitText(d time.Duration, lang i18n.Lang) string {
	if d%time.Second == 0 {
		n := int(d / time.Second)
		if n == 1 {
			return i18n.T(lang, i18n.PrintSecond)
		}
		return i18n.T(lang, i18n.PrintSeconds, n)
	}
	return i18n.T(lang, i18n.PrintMillis, d.Milliseconds())
}

// pipeRead reads a stream on its own goroutine, so that the first byte
// can be waited for with a deadline (a pipe's Read cannot be cancelled).
type pipeRead struct {
	first, done chan struct{}
	mu          sync.Mutex
	buf         bytes.Buffer
	err         error
}

func startPipe(r io.Reader) *pipeRead {
	p := &pipeRead{first: make(chan struct{}), done: make(chan struct{})}
	go func() {
		var once sync.Once
		b := make([]byte, 32<<10)
		for {
			n, err := r.Read(b)
			if n > 0 {
				p.mu.Lock()
				p.buf.Write(b[:n])
				p.mu.Unlock()
				once.Do(func() { close(p.first) })
			}
			if err != nil {
				if err != io.EOF {
					p.mu.Lock()
					p.err = err
					p.mu.Unlock()
				}
				once.Do(func() { close(p.first) })
				close(p.done)
				return
			}
		}
	}()
	return p
}

func (p *pipeRead) text() (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.buf.String(), p.err
}

// isTerminal reports a terminal. Not f.Fd(): it would put a non-blocking
// stdin into blocking mode.
func isTerminal(f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	tty := false
	_ = rc.Control(func(fd uintptr) {
		_, err := unix.IoctlGetTermios(int(fd), ioctlGetTermios)
		tty = err == nil
	})
	return tty
}
