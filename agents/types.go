package agents

import (
	"strings"

	"github.com/armadra/ama-rpc/session"
)

// Sources of agent types (AgentInfo.source).
const (
	SourceBuiltin = "builtin"
	SourceCLI     = "cli"
	SourceUser    = "user"
	SourceProject = "project"
)

// RunnerAma is the runner of in-process ama sub-agents.
const RunnerAma = "ama"

// Type is one agent type: a built-in or a Markdown definition.
type Type struct {
	Name        string
	Description string
	Runner      string // "ama", "acp:<program>", or a host runner's id (Source "host")
	Source      string
	FilePath    string
	// ReadOnly types run with a plan-mode pipeline whose asks are denies.
	ReadOnly bool
	// Tools is an allow-list; Disallowed removes tools from the parent's
	// set. Both empty: the parent's active set.
	Tools, Disallowed []string
	// Model is "inherit" (or empty), "fast", "strong" or provider/id.
	Model      string
	Thinking   string
	MaxTurns   int
	Isolation  string
	Background *bool
	Context    string // fresh (default) or fork
	// Body is the type's role text (after the common preamble).
	Body string
}

// DefaultMaxTurns bounds a sub-agent run without maxTurns.
const DefaultMaxTurns = 30

// rolePreamble starts every sub-agent's role section.
const rolePreamble = "You are a sub-agent. The main agent handed you one task; it sees nothing of your work except your final reply. " +
	"Do the task yourself (you cannot delegate) and finish with a short report: what you did, what you found, and which files you changed."

// Role returns the role section of the type.
func (t *Type) Role() string {
	if strings.TrimSpace(t.Body) == "" {
		return rolePreamble
	}
	return rolePreamble + "\n\n" + strings.TrimSpace(t.Body)
}

// Builtins are the built-in types in catalog order.
func Builtins() []*Type {
	return []*Type{
		{Name: "general", Runner: RunnerAma, Source: SourceBuiltin, MaxTurns: DefaultMaxTurns,
			Description: "General-purpose sub-agent (the default): investigates and edits code the way the main agent does."},
		{Name: "explore", Runner: RunnerAma, Source: SourceBuiltin, MaxTurns: DefaultMaxTurns, ReadOnly: true,
			Description: "Read-only searcher: finds files, symbols and code paths and answers with paths and line numbers.",
			Body: "Locate what was asked for; do not review or fix it. Answer with file paths and line numbers, and say where you looked. " +
				"Use bash only for read-only commands."},
		{Name: "plan", Runner: RunnerAma, Source: SourceBuiltin, MaxTurns: DefaultMaxTurns, ReadOnly: true,
			Description: "Read-only planner: answers with an ordered plan, the files that matter and the trade-offs.",
			Body:        "Produce a numbered plan: the steps in order, the key files, and the risks or trade-offs. Do not change anything."},
	}
}

// Catalog is the ordered set of agent types of a process. It is immutable
// after construction.
type Catalog struct {
	types []*Type
}

// NewCatalog returns the built-ins overridden or followed by defs (first
// definition of a name wins; a definition may replace a built-in).
func NewCatalog(defs []*Type) *Catalog {
	c := &Catalog{}
	seen := map[string]int{}
	for _, t := range Builtins() {
		seen[t.Name] = len(c.types)
		c.types = append(c.types, t)
	}
	overridden := map[string]bool{}
	for _, d := range defs {
		if i, ok := seen[d.Name]; ok {
			if c.types[i].Source == SourceBuiltin && !overridden[d.Name] {
				c.types[i], overridden[d.Name] = d, true
			}
			continue
		}
		seen[d.Name] = len(c.types)
		c.types = append(c.types, d)
	}
	return c
}

// Lookup returns the type called name.
func (c *Catalog) Lookup(name string) *Type {
	for _, t := range c.types {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// Types returns the types in order.
func (c *Catalog) Types() []*Type { return append([]*Type(nil), c.types...) }

// Names returns the type names in order.
func (c *Catalog) Names() []string {
	out := make([]string, len(c.types))
	for i, t := range c.types {
		out[i] = t.Name
	}
	return out
}

// AgentInfo is one entry of get_agents (declared by session.Tasks).
type AgentInfo = session.AgentInfo

// Infos returns the get_agents list.
func (c *Catalog) Infos() []AgentInfo {
	out := make([]AgentInfo, 0, len(c.types))
	for _, t := range c.types {
		out = append(out, AgentInfo{Name: t.Name, Description: t.Description, Runner: t.Runner, Source: t.Source, FilePath: t.FilePath})
	}
	return out
}

// listBudget bounds the agent list in the task description; over it only
// the names are listed.
const listBudget = 1600

// describe is the agent list of the task tool's description.
func (c *Catalog) describe() string {
	var b strings.Builder
	for i, t := range c.types {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("- " + t.Name + ": " + t.Description)
	}
	if b.Len() > listBudget {
		return strings.Join(c.Names(), ", ")
	}
	return b.String()
}
