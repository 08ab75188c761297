package approvals

import (
	"path"
	"strings"
	"sync"
)

// Memory holds "allow for this session" grants. It lives in memory only and
// is safe for concurrent use. The zero value is ready to use.
//
// A grant only lifts an ask of the mode step (in auto mode: after the rule
// tier). It never lifts a deny rule, the dangerous list, auto's rule tier,
// plan mode's refusals or anything in allowlist mode.
type Memory struct {
	mu     sync.Mutex
	grants []grant
}

type grantKind int

const (
	grantTool    grantKind = iota // every call of the tool
	grantCommand                  // bash commands starting with prefix
	grantDir                      // paths at or below prefix
)

type grant struct {
	tool   string
	kind   grantKind
	prefix string
}

// NewMemory returns an empty memory.
func NewMemory() *Memory { return &Memory{} }

// Remember records a grant for the call: for bash the first two words of
// the (first) command, for tools with a path the directory of the resolved
// path, for everything else the tool name. The memory tool is granted as a
// whole.
func (m *Memory) Remember(call Call) {
	if m == nil {
		return
	}
	g, ok := grantFor(newCallCtx(call))
	if !ok {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, old := range m.grants {
		if old == g {
			return
		}
	}
	m.grants = append(m.grants, g)
}

func grantFor(c *callCtx) (grant, bool) {
	g := grant{tool: c.tool}
	switch {
	case c.isBash && !c.bgQuery:
		text := c.bash.collapsed
		if len(c.bash.Segments) > 0 && c.bash.Segments[0].Text != "" {
			text = c.bash.Segments[0].Text
		}
		words := strings.Fields(text)
		if len(words) == 0 {
			return g, false
		}
		g.kind, g.prefix = grantCommand, strings.Join(words[:min(2, len(words))], " ")
	case c.isMemory:
		g.kind = grantTool
	case c.hasPath:
		if !c.pathOK {
			return g, false
		}
		g.kind, g.prefix = grantDir, path.Dir(c.path)
	default:
		g.kind = grantTool
	}
	return g, true
}

// Covers reports whether a grant covers the call.
func (m *Memory) Covers(call Call) bool {
	return m.covers(newCallCtx(call))
}

// Clear forgets all grants.
func (m *Memory) Clear() {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.grants = nil
	m.mu.Unlock()
}

func (m *Memory) covers(c *callCtx) bool {
	if m == nil || c.invalid != "" {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.grants) == 0 {
		return false
	}
	if c.isBash && !c.bgQuery {
		return m.coversBash(c)
	}
	for _, g := range m.grants {
		if g.tool != c.tool {
			continue
		}
		switch g.kind {
		case grantTool:
			return true
		case grantDir:
			if c.hasPath && c.pathOK && within(c.path, g.prefix) {
				return true
			}
		}
	}
	return false
}

// coversBash: every segment of every layer must equal a remembered prefix
// or start with it followed by a space; no substitution, no compound
// structure, nothing opaque and no excessive nesting.
func (m *Memory) coversBash(c *callCtx) bool {
	a := c.bash
	if a == nil || a.Err != nil || a.TooDeep || a.Subst || a.Compound || len(a.Segments) == 0 {
		return false
	}
	for i := range a.Segments {
		s := &a.Segments[i]
		if s.opaque != "" {
			return false
		}
		ok := false
		for _, g := range m.grants {
			if g.tool == c.tool && g.kind == grantCommand && wordPrefix(s.Text, g.prefix) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}
