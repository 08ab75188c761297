package mcpclient

import (
	"bytes"
	"os/exec"
	"sync"
	"syscall"

	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/internal/childenv"
	"github.com/armadra/ama-rpc/internal/utf8cut"
)

// process is a stdio server's child process.
type process struct {
	cmd  *exec.Cmd
	once sync.Once
}

// newProcess prepares the child (the SDK's CommandTransport starts it):
// the configured command and arguments only, in the project directory,
// with the scrubbed environment plus the server's env, in its own process
// group, stderr to the log. A command without a slash is found on PATH
// outside the project (childenv.LookPath: an npx planted in the project's
// .venv/bin is not run).
func newProcess(cfg Server, opts Options, log *zap.Logger) (*process, error) {
	prog, err := childenv.LookPath(cfg.Command, opts.Cwd)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(prog, cfg.Args...)
	cmd.Args[0] = cfg.Command
	cmd.Dir = opts.Cwd
	cmd.Env = childenv.Environ(opts.Env, cfg.Env...)
	cmd.Stderr = &logWriter{log: log}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if cmd.Err != nil {
		return nil, cmd.Err
	}
	return &process{cmd: cmd}, nil
}

// kill ends the child's whole process group (what the server started
// too). nil-safe; once.
func (p *process) kill() {
	if p == nil || p.cmd.Process == nil {
		return
	}
	p.once.Do(func() {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	})
}

// exitCode describes how the child ended ("" while unknown).
func (p *process) exitCode() string {
	if p == nil || p.cmd.ProcessState == nil {
		return ""
	}
	return p.cmd.ProcessState.String()
}

// logWriter sends a server's stderr to the log, a line at a time (lines
// cut at maxLogLine bytes), never to stdout.
type logWriter struct {
	log *zap.Logger
	mu  sync.Mutex
	buf []byte
}

const maxLogLine = 4096

func (w *logWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, b...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			if len(w.buf) > maxLogLine {
				w.emit(w.buf)
				w.buf = w.buf[:0]
			}
			break
		}
		w.emit(w.buf[:i])
		w.buf = w.buf[i+1:]
	}
	return len(b), nil
}

func (w *logWriter) emit(line []byte) {
	if len(line) == 0 {
		return
	}
	w.log.Info("mcp server stderr", zap.String("line", utf8cut.Head(string(line), maxLogLine)))
}
