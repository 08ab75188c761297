package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/armadra/ama-rpc/internal/childenv"
	"github.com/armadra/ama-rpc/internal/ownfs"
	"github.com/armadra/ama-rpc/sandbox/launcher"
)

// Verification is the result of the canary self-test: probes run inside
// the real sandbox that try what it must refuse (write outside the project,
// write through a link out of it, change a file's mode outside, read a
// hidden file, open a TCP connection and send a UDP datagram with the
// network denied, push input into a terminal with TIOCSTI). A probe fails
// when it succeeded or its side effect is seen (the marker file, the
// changed mode, the listener's connection or datagram).
type Verification struct {
	// Done is false until the self-test finished.
	Done bool `json:"-"`
	// Verified: every probe was refused.
	Verified bool `json:"verified"`
	// Failed names the probes that got through (write, link, chmod, read,
	// tcp, udp, tiocsti), or "run" when the self-test could not run.
	Failed []string `json:"failed,omitempty"`
	// Ms is how long the self-test took (0 when read from the cache).
	Ms int64 `json:"ms"`
	// Detail says why the self-test could not run.
	Detail string `json:"detail,omitempty"`
}

// Probes whose failure means the sandbox does not confine files: bash then
// runs as without it (asking). A failed network probe only means the
// network is not denied.
var (
	fileProbes    = []string{"write", "link", "read"}
	networkProbes = []string{"tcp", "udp"}
)

// Verify runs the canary self-test once (later calls return the first
// result), or reads its result from the cache file of this boot, launcher
// and policy. It blocks for the duration of the test (tens of
// milliseconds); app runs it in the background, so it never delays hello.
func (r *Runtime) Verify() Verification {
	if r == nil || !r.settings.Wanted() || !r.status.Available {
		return Verification{}
	}
	r.verifyOnce.Do(func() {
		v := r.cachedVerification()
		if !v.Done {
			v = r.runCanaries()
			r.storeVerification(v)
		}
		r.mu.Lock()
		r.verification = v
		r.mu.Unlock()
	})
	return r.Verification()
}

// Verification returns the self-test's result so far (Done false while it
// has not finished).
func (r *Runtime) Verification() Verification {
	if r == nil {
		return Verification{}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.verification
}

func (v Verification) failed(names []string) bool {
	return v.Done && slices.ContainsFunc(v.Failed, func(f string) bool { return f == "run" || slices.Contains(names, f) })
}

// canaryTimeout bounds the probes' run.
const canaryTimeout = 10 * time.Second

// runProbes runs the launcher binary bin (through its descriptor, so it
// need not be visible inside the sandbox) with args in p's jail, the way
// foreground commands run: forked by a pre-started launcher of its own.
// Where there is none (no namespaces), it is started through Wrap, as
// every command then is. It returns the output; an error when it did not
// run or did not exit 0.
func (r *Runtime) runProbes(p Policy, bin *os.File, args []string, dir string) (string, error) {
	env := childenv.Environ(childenv.Policy{})
	code, text, err := r.runAlone(p, "/proc/self/fd/3", append([]string{"/proc/self/fd/3"}, args...), env, dir, bin, canaryTimeout)
	if !errors.Is(err, ErrNoLauncher) {
		if err == nil && code != 0 {
			err = fmt.Errorf("exit code %d", code)
		}
		if err != nil {
			return "", fmt.Errorf("%v: %s", err, strings.TrimSpace(text))
		}
		return text, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), canaryTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/proc/self/fd/3", args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.ExtraFiles = []*os.File{bin}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	release, err := r.wrap(cmd, p, false)
	if err != nil {
		return "", err
	}
	err = cmd.Start()
	release()
	if err == nil {
		err = cmd.Wait()
	}
	if err != nil {
		return "", fmt.Errorf("%v: %s", err, strings.TrimSpace(out.String()))
	}
	return out.String(), nil
}

func (r *Runtime) runCanaries() Verification {
	start := time.Now()
	v := Verification{Done: true}
	fail := func(detail string) Verification {
		v.Failed, v.Detail, v.Ms = []string{"run"}, detail, time.Since(start).Milliseconds()
		return v
	}
	// The probes' files lie where the jail shows the system read-only
	// (/var/tmp), so a refused write proves the read-only view; ama's data
	// directory and the temp directory are hidden or replaced inside,
	// where every write fails as missing whatever the mounts do.
	parent := "/var/tmp"
	if fi, err := os.Stat(parent); err != nil || !fi.IsDir() || r.status.Mechanism == "none" {
		parent = r.base.Data
		if parent == "" {
			parent = os.TempDir()
		}
		if err := os.MkdirAll(parent, 0o700); err != nil {
			return fail(err.Error())
		}
	}
	root, err := os.MkdirTemp(parent, "ama-sandbox-canary-")
	if err != nil {
		return fail(err.Error())
	}
	defer os.RemoveAll(root)
	proj, outside := filepath.Join(root, "proj"), filepath.Join(root, "outside")
	secret, mode := filepath.Join(root, "secret"), filepath.Join(outside, "mode")
	for _, d := range []string{proj, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return fail(err.Error())
		}
	}
	if err := ownfs.WriteAtomicIn(root, "secret", []byte("canary secret\n")); err != nil {
		return fail(err.Error())
	}
	if err := ownfs.WriteAtomicIn(root, filepath.Join("outside", "mode"), nil); err != nil {
		return fail(err.Error())
	}
	if err := os.Symlink("../outside", filepath.Join(proj, "link")); err != nil {
		return fail(err.Error())
	}
	d := r.base
	d.Project, d.Output, d.Tmp = proj, "", filepath.Join(root, "tmp")
	p := ForBash(r.settings, d, false)
	p.Hide = append(p.Hide, secret)
	p.DenyNetwork = r.settings.NetworkDenied && r.status.NetworkIsolation
	probes := []string{"write=" + filepath.Join(outside, "w"), "link=" + filepath.Join(proj, "link", "l"),
		"chmod=" + mode, "read=" + secret}
	var tcp net.Listener
	var udp net.PacketConn
	if p.DenyNetwork {
		if tcp, err = net.Listen("tcp4", "127.0.0.1:0"); err != nil {
			return fail(err.Error())
		}
		defer tcp.Close()
		if udp, err = net.ListenPacket("udp4", "127.0.0.1:0"); err != nil {
			return fail(err.Error())
		}
		defer udp.Close()
		probes = append(probes, "tcp="+strconv.Itoa(tcp.Addr().(*net.TCPAddr).Port), "udp="+strconv.Itoa(udp.LocalAddr().(*net.UDPAddr).Port))
	}
	if r.status.Seccomp {
		if tty, closeTTY, err := openPTY(); err == nil {
			defer closeTTY()
			probes = append(probes, "tiocsti="+tty)
		}
	}
	bin, err := os.Open(r.launcher())
	if err != nil {
		return fail(err.Error())
	}
	defer bin.Close()
	text, err := r.runProbes(p, bin, append([]string{launcher.CanaryArg}, probes...), proj)
	if err != nil {
		return fail(err.Error())
	}
	refused := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		name, rest, _ := strings.Cut(sc.Text(), " ")
		refused[name] = strings.HasPrefix(rest, "refused")
	}
	seen := map[string]bool{
		"write": exists(filepath.Join(outside, "w")),
		"link":  exists(filepath.Join(outside, "l")),
	}
	if fi, err := os.Stat(mode); err != nil || fi.Mode().Perm() != 0o600 {
		seen["chmod"] = true
	}
	if tcp != nil {
		_ = tcp.(*net.TCPListener).SetDeadline(time.Now())
		if c, err := tcp.Accept(); err == nil {
			c.Close()
			seen["tcp"] = true
		}
		_ = udp.SetReadDeadline(time.Now())
		if n, _, err := udp.ReadFrom(make([]byte, 16)); err == nil && n > 0 {
			seen["udp"] = true
		}
	}
	for _, pr := range probes {
		name, _, _ := strings.Cut(pr, "=")
		if ok, ran := refused[name]; !ran || !ok || seen[name] {
			v.Failed = append(v.Failed, name)
		}
	}
	if len(refused) == 0 || os.Getenv("AMA_DEBUG_CANARY") != "" {
		v.Detail = "the probes did not report: " + strings.TrimSpace(text)
	}
	v.Verified = len(v.Failed) == 0
	v.Ms = time.Since(start).Milliseconds()
	return v
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// cacheFile is where the self-test's result is kept for this boot, this
// launcher binary and this policy: in ama's data directory, which
// sandboxed commands cannot see and no tool may write (never the build
// cache, which sandboxed commands write: a forged result there would make
// the next session claim a sandbox it has not verified).
func (r *Runtime) cacheFile() string {
	if r.base.Data == "" {
		return ""
	}
	boot, err := ownfs.ReadUser("/proc/sys/kernel/random/boot_id", 4096)
	if err != nil {
		return ""
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%s|%s|%+v|%+v|%+v", boot, r.launcher(), r.settings, r.status, r.base)
	if fi, err := os.Stat(r.launcher()); err == nil {
		fmt.Fprintf(h, "|%d|%d", fi.Size(), fi.ModTime().UnixNano())
	}
	return filepath.Join(r.base.Data, "sandbox", "canary-"+strconv.FormatUint(h.Sum64(), 36)+".json")
}

func (r *Runtime) cachedVerification() Verification {
	var v Verification
	f := r.cacheFile()
	if f == "" {
		return v
	}
	b, err := ownfs.ReadUser(f, 1<<20)
	if err != nil || json.Unmarshal(b, &v) != nil {
		return Verification{}
	}
	v.Done, v.Ms = true, 0
	return v
}

func (r *Runtime) storeVerification(v Verification) {
	f := r.cacheFile()
	if f == "" || slices.Contains(v.Failed, "run") {
		return // a self-test that could not run is retried next time
	}
	b, _ := json.Marshal(v)
	_ = ownfs.WriteAtomic(filepath.Dir(f), filepath.Base(f), b)
}
