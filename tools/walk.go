package tools

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	ignore "github.com/sabhiram/go-gitignore"

	"github.com/armadra/ama-rpc/internal/secrets"
)

// maxWalkEntries bounds how many directory entries one grep or glob looks
// at.
const maxWalkEntries = 200000

// maxIgnoreFileBytes is how much of one .gitignore or .ignore is read.
const maxIgnoreFileBytes = 1 << 20

// errWalkLimit stops a walk that saw maxWalkEntries entries.
var errWalkLimit = errors.New("walk limit reached")

// errStopWalk is returned by a visit function to end the walk early.
var errStopWalk = errors.New("stop walk")

// ignoreLayer is the combined .gitignore and .ignore of one directory; its
// patterns apply to paths below dir.
type ignoreLayer struct {
	dir string
	gi  *ignore.GitIgnore
}

func (l ignoreLayer) ignores(abs string, isDir bool) bool {
	rel, ok := relInside(l.dir, abs)
	if !ok || rel == "." {
		return false
	}
	if isDir {
		rel += "/"
	}
	return l.gi.MatchesPath(rel)
}

// loadIgnores reads dir/.gitignore then dir/.ignore (so that .ignore can
// re-include with "!"); ok is false when neither exists.
func loadIgnores(dir string) (ignoreLayer, bool) {
	var lines []string
	for _, name := range []string{".gitignore", ".ignore"} {
		b, _, err := readRegularFile(filepath.Join(dir, name), maxIgnoreFileBytes)
		if err != nil {
			continue
		}
		lines = append(lines, strings.Split(string(b), "\n")...)
	}
	if len(lines) == 0 {
		return ignoreLayer{}, false
	}
	return ignoreLayer{dir: dir, gi: ignore.CompileIgnoreLines(lines...)}, true
}

func ignored(layers []ignoreLayer, abs string, isDir bool) bool {
	for _, l := range layers {
		if l.ignores(abs, isDir) {
			return true
		}
	}
	return false
}

// walkFiles visits the files below root (a real path) in lexical order, depth first,
// calling visit with each file's absolute path and entry. It skips .git,
// secret paths (secretPath; a secret root is not walked at all),
// files and directories matched by the .gitignore/.ignore files of root,
// of its subdirectories and of root's ancestors up to the session cwd, and
// symlinks to directories (symlinked files are visited). A root that the
// ancestors' rules would ignore is walked anyway (it was asked for), with
// only the ignore files inside it applied. skipDir, when not nil, prunes
// further directories. visit may return errStopWalk.
// The walk ends with errWalkLimit after maxWalkEntries entries and with
// ctx's error when ctx ends.
//
// The visits are sequential (in the calling goroutine); the directories
// the walk will enter are listed ahead by a few goroutines (a
// dirPrefetcher), which end before walkFiles returns.
func walkFiles(ctx context.Context, env *Env, root string, skipDir func(abs string) bool, visit func(abs string, d fs.DirEntry) error) error {
	if secretPath(env, root) {
		return nil // a credential store is never walked
	}
	layers := ancestorIgnores(realOr(env.cwd()), root)
	if ignored(layers, root, true) {
		layers = nil
	}
	pre := newDirPrefetcher(ctx)
	defer pre.stop()
	seen := 0
	var walkDir func(job *listJob, layers []ignoreLayer) error
	walkDir = func(job *listJob, layers []ignoreLayer) error {
		dir := job.dir
		l := pre.take(job)
		if l.err != nil && ctx.Err() != nil {
			return ctx.Err()
		}
		if l.err != nil {
			return nil // unreadable directories are skipped
		}
		if l.hasIgnores {
			layers = append(layers[:len(layers):len(layers)], l.ignores)
		}
		// Decide first which entries are files to visit and which
		// directories to enter, so that the directories can be listed
		// ahead while the walk is in the first of them.
		type step struct {
			abs string
			sub *listJob // a directory to enter
			ok  bool     // a file to visit
		}
		steps := make([]step, len(l.entries))
		var subs []*listJob
		for i, d := range l.entries {
			if d.Name() == ".git" {
				continue
			}
			abs := joinEntry(dir, d.Name())
			isDir := d.IsDir()
			if d.Type()&fs.ModeSymlink != 0 {
				fi, err := os.Stat(abs)
				if err != nil || fi.IsDir() {
					continue // broken link or link to a directory
				}
			}
			if ignored(layers, abs, isDir) || secretPath(env, abs) {
				continue
			}
			if isDir {
				if skipDir != nil && skipDir(abs) {
					continue
				}
				steps[i] = step{abs: abs, sub: &listJob{dir: abs, done: make(chan struct{})}}
				subs = append(subs, steps[i].sub)
				continue
			}
			steps[i] = step{abs: abs, ok: true}
		}
		pre.queue(subs)
		for i, d := range l.entries {
			seen++
			if seen > maxWalkEntries {
				return errWalkLimit
			}
			if seen%256 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			st := steps[i]
			switch {
			case st.sub != nil:
				if err := walkDir(st.sub, layers); err != nil {
					return err
				}
			case st.ok:
				if err := visit(st.abs, d); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walkDir(&listJob{dir: root, done: make(chan struct{})}, layers)
}

// secretPath reports a path on the one list of credential stores
// (internal/secrets) or in ama's private places: the walks of grep and
// glob skip it, whatever their root, so a search of HOME or of a tree with
// a key in it never reads the secret (the verdict asks about such roots
// in auto mode; other modes rely on this).
func secretPath(env *Env, abs string) bool {
	p := filepath.ToSlash(abs)
	return secrets.Reason(p) != "" || secrets.PrivateReason(p, env.Private) != ""
}

// dirListing is one directory as the walk needs it: its entries sorted by
// name and its own ignore files.
type dirListing struct {
	entries    []fs.DirEntry
	err        error
	ignores    ignoreLayer
	hasIgnores bool
}

// listDir lists dir without blocking on a FIFO put in a directory's place
// and loads its .gitignore and .ignore when it has them.
func listDir(ctx context.Context, dir string) dirListing {
	entries, err := readDir(ctx, dir)
	if err != nil {
		return dirListing{err: err}
	}
	l := dirListing{entries: entries}
	for _, d := range entries {
		if n := d.Name(); n == ".gitignore" || n == ".ignore" {
			l.ignores, l.hasIgnores = loadIgnores(dir)
			break
		}
	}
	return l
}

// listJob is a directory to list, by a prefetcher worker or by the walk
// itself, whichever takes it first.
type listJob struct {
	dir   string
	taken atomic.Bool
	done  chan struct{} // closed when l is set
	l     dirListing
}

// Bounds of the listing ahead of the walk.
const (
	prefetchWorkers = 2
	// prefetchMaxEntries bounds the entries listed ahead and not yet
	// walked (memory, and work past an early end of the walk).
	prefetchMaxEntries = 20000
)

// dirPrefetcher lists directories ahead of a walk. Jobs are taken from
// the top of a stack: the children of the directory the walk is in come
// first, which is where a depth-first walk goes next. The walk takes a job
// nobody started itself, so it never waits for a queue.
type dirPrefetcher struct {
	ctx     context.Context
	mu      sync.Mutex
	cond    *sync.Cond
	stack   []*listJob
	ahead   int // entries listed and not yet taken by the walk
	stopped bool
	wg      sync.WaitGroup
}

func newDirPrefetcher(ctx context.Context) *dirPrefetcher {
	p := &dirPrefetcher{ctx: ctx}
	p.cond = sync.NewCond(&p.mu)
	for range prefetchWorkers {
		p.wg.Add(1)
		go p.work()
	}
	return p
}

// queue adds the directories the walk will enter, in walk order.
func (p *dirPrefetcher) queue(jobs []*listJob) {
	if len(jobs) == 0 {
		return
	}
	p.mu.Lock()
	for i := len(jobs) - 1; i >= 0; i-- { // the first on top
		p.stack = append(p.stack, jobs[i])
	}
	p.mu.Unlock()
	for range min(len(jobs), prefetchWorkers) {
		p.cond.Signal()
	}
}

func (p *dirPrefetcher) work() {
	defer p.wg.Done()
	for {
		p.mu.Lock()
		for !p.stopped && (len(p.stack) == 0 || p.ahead >= prefetchMaxEntries) {
			p.cond.Wait()
		}
		if p.stopped {
			p.mu.Unlock()
			return
		}
		job := p.stack[len(p.stack)-1]
		p.stack[len(p.stack)-1] = nil
		p.stack = p.stack[:len(p.stack)-1]
		p.mu.Unlock()
		if !job.taken.CompareAndSwap(false, true) {
			continue // the walk got there first
		}
		job.l = listDir(p.ctx, job.dir)
		p.mu.Lock()
		p.ahead += len(job.l.entries)
		p.mu.Unlock()
		close(job.done)
	}
}

// take returns the listing of job, listing it now unless a worker has.
func (p *dirPrefetcher) take(job *listJob) dirListing {
	if job.taken.CompareAndSwap(false, true) {
		return listDir(p.ctx, job.dir)
	}
	<-job.done
	p.mu.Lock()
	full := p.ahead >= prefetchMaxEntries
	p.ahead -= len(job.l.entries)
	p.mu.Unlock()
	if full {
		p.cond.Broadcast()
	}
	return job.l
}

// stop ends the workers and waits for them.
func (p *dirPrefetcher) stop() {
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
	p.cond.Broadcast()
	p.wg.Wait()
}

// ancestorIgnores loads the ignore files of the directories from cwd down
// to root's parent, when root is below cwd.
func ancestorIgnores(cwd, root string) []ignoreLayer {
	rel, ok := relInside(cwd, root)
	if !ok || rel == "." {
		return nil
	}
	var layers []ignoreLayer
	dir := cwd
	parts := strings.Split(rel, "/")
	for i := 0; i < len(parts); i++ {
		if l, ok := loadIgnores(dir); ok {
			layers = append(layers, l)
		}
		dir = filepath.Join(dir, parts[i])
	}
	return layers
}

// joinEntry is filepath.Join(dir, name) for a clean dir and a directory
// entry's name (never "", ".", ".." or holding a separator), without
// cleaning again: the walk builds one per entry.
func joinEntry(dir, name string) string {
	if dir == string(filepath.Separator) {
		return dir + name
	}
	return dir + string(filepath.Separator) + name
}
