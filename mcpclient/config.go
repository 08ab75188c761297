package mcpclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
)

// Transports a Server may use. Transports lists those this package
// connects; ACP's initialize advertises http and sse from it.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http"
	TransportSSE   = "sse"
)

// Sources of a server definition.
const (
	SourceConfig  = "config"  // user config (with the profile's merged in)
	SourceProject = "project" // <cwd>/.ama/config.json of a trusted project
	SourceACP     = "acp"     // the ACP client's mcpServers
)

// ErrInvalid is wrapped by the parse errors.
var ErrInvalid = errors.New("invalid MCP server")

// maxServers bounds the servers of one session (each may be a process).
const maxServers = 32

// Server is one MCP server definition.
type Server struct {
	Name      string
	Transport string // stdio, http or sse
	// Command and Args start a stdio server (the command is looked up on
	// PATH when it has no slash); Env are KEY=VALUE entries added to the
	// scrubbed environment.
	Command string
	Args    []string
	Env     []string
	// URL and Headers reach an http or sse server.
	URL     string
	Headers map[string]string
	// TrustReadOnly honours the server's readOnlyHint (its read-only
	// tools are read-class, so the mode may allow them without asking).
	// Only the user's own config can set it.
	TrustReadOnly bool
	Source        string
}

// pair is ACP's {name, value} (env variables, HTTP headers).
type pair struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// pairs accepts ACP's [{name, value}] or a plain {"NAME": "value"} object.
type pairs []pair

func (p *pairs) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '{' {
		var m map[string]string
		if err := json.Unmarshal(b, &m); err != nil {
			return err
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			*p = append(*p, pair{Name: k, Value: m[k]})
		}
		return nil
	}
	var list []pair
	if err := json.Unmarshal(b, &list); err != nil {
		return err
	}
	*p = list
	return nil
}

// entry is one server as written: ACP's McpServer shape, plus the config
// fields trustReadOnlyHint and disabled.
type entry struct {
	Name              string   `json:"name"`
	Type              string   `json:"type"`
	Command           string   `json:"command"`
	Args              []string `json:"args"`
	Env               pairs    `json:"env"`
	URL               string   `json:"url"`
	Headers           pairs    `json:"headers"`
	TrustReadOnlyHint bool     `json:"trustReadOnlyHint"`
	Disabled          bool     `json:"disabled"`
}

// ParseACP reads ACP's mcpServers (session/new, load, resume). A bad entry
// is left out and named in the errors; the others are kept.
func ParseACP(raw []json.RawMessage) ([]Server, []error) {
	var out []Server
	var errs []error
	for i, r := range raw {
		var e entry
		if err := json.Unmarshal(r, &e); err != nil {
			errs = append(errs, fmt.Errorf("%w: mcpServers[%d]: %v", ErrInvalid, i, err))
			continue
		}
		e.TrustReadOnlyHint = false // the user's config alone may trust a server's claims
		s, err := e.server(SourceACP)
		if err != nil {
			errs = append(errs, fmt.Errorf("mcpServers[%d]: %w", i, err))
			continue
		}
		out = append(out, s)
	}
	return out, errs
}

// ParseConfig reads a config file's mcpServers: an object from name to
// server ({"command", "args", "env", "type", "url", "headers",
// "trustReadOnlyHint", "disabled"}) or an array in ACP's shape. source is
// SourceConfig or SourceProject; a project may not trust a server's
// readOnlyHint. An absent value is no servers.
func ParseConfig(raw json.RawMessage, source string) ([]Server, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	var entries []entry
	if raw[0] == '{' {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, fmt.Errorf("%w: mcpServers: %v", ErrInvalid, err)
		}
		names := make([]string, 0, len(m))
		for n := range m {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			var e entry
			if err := strictDecode(m[n], &e); err != nil {
				return nil, fmt.Errorf("%w: mcpServers.%s: %v", ErrInvalid, n, err)
			}
			if e.Name != "" && e.Name != n {
				return nil, fmt.Errorf("%w: mcpServers.%s: name %q differs from its key", ErrInvalid, n, e.Name)
			}
			e.Name = n
			entries = append(entries, e)
		}
	} else {
		var list []json.RawMessage
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, fmt.Errorf("%w: mcpServers must be an object or an array: %v", ErrInvalid, err)
		}
		for i, r := range list {
			var e entry
			if err := strictDecode(r, &e); err != nil {
				return nil, fmt.Errorf("%w: mcpServers[%d]: %v", ErrInvalid, i, err)
			}
			entries = append(entries, e)
		}
	}
	var out []Server
	for _, e := range entries {
		if e.Disabled {
			continue
		}
		if source != SourceConfig {
			e.TrustReadOnlyHint = false
		}
		s, err := e.server(source)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	if len(out) > maxServers {
		return nil, fmt.Errorf("%w: more than %d mcpServers", ErrInvalid, maxServers)
	}
	return out, nil
}

func strictDecode(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// server checks an entry and turns it into a Server.
func (e entry) server(source string) (Server, error) {
	s := Server{Name: e.Name, Command: e.Command, Args: e.Args, URL: e.URL, TrustReadOnly: e.TrustReadOnlyHint, Source: source}
	if err := checkName(e.Name); err != nil {
		return s, err
	}
	bad := func(format string, a ...any) (Server, error) {
		return s, fmt.Errorf("%w %q: %s", ErrInvalid, e.Name, fmt.Sprintf(format, a...))
	}
	s.Transport = e.Type
	if s.Transport == "" {
		s.Transport = TransportStdio
		if e.Command == "" && e.URL != "" {
			s.Transport = TransportHTTP
		}
	}
	switch s.Transport {
	case TransportStdio:
		if strings.TrimSpace(e.Command) == "" {
			return bad("a stdio server needs a command")
		}
		if e.URL != "" || len(e.Headers) > 0 {
			return bad("a stdio server takes no url or headers")
		}
		for _, p := range e.Env {
			if p.Name == "" || strings.ContainsAny(p.Name, "=\x00") || strings.Contains(p.Value, "\x00") {
				return bad("bad environment variable %q", p.Name)
			}
			s.Env = append(s.Env, p.Name+"="+p.Value)
		}
		for _, a := range e.Args {
			if strings.Contains(a, "\x00") {
				return bad("an argument holds a NUL byte")
			}
		}
	case TransportHTTP, TransportSSE:
		u, err := url.Parse(e.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return bad("url must be an http or https URL")
		}
		if e.Command != "" || len(e.Args) > 0 || len(e.Env) > 0 {
			return bad("an %s server takes no command, args or env", s.Transport)
		}
		for _, h := range e.Headers {
			if h.Name == "" || strings.ContainsAny(h.Name+h.Value, "\r\n\x00") {
				return bad("bad header %q", h.Name)
			}
			if s.Headers == nil {
				s.Headers = map[string]string{}
			}
			s.Headers[h.Name] = h.Value
		}
	default:
		return bad("unknown type %q (stdio, http or sse)", e.Type)
	}
	return s, nil
}

// checkName accepts 1 to 32 letters, digits, '-' and '_' (the name is part
// of every tool name: mcp__<server>__<tool>, which permission rules and
// hook matchers name).
func checkName(n string) error {
	if n == "" || len(n) > 32 {
		return fmt.Errorf("%w: name %q must have 1 to 32 characters", ErrInvalid, n)
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return fmt.Errorf("%w: name %q may only hold letters, digits, - and _", ErrInvalid, n)
		}
	}
	if strings.Contains(n, "__") {
		return fmt.Errorf("%w: name %q may not contain \"__\" (it separates server and tool)", ErrInvalid, n)
	}
	return nil
}

// Merge joins the sources in order (user config, trusted project, ACP
// client): a later server with a name already taken is left out and
// named in the errors (a project cannot replace the user's server, nor a
// client a configured one).
func Merge(lists ...[]Server) ([]Server, []error) {
	var out []Server
	var errs []error
	seen := map[string]string{}
	for _, l := range lists {
		for _, s := range l {
			if src, dup := seen[strings.ToLower(s.Name)]; dup {
				errs = append(errs, fmt.Errorf("%w: %s server %q left out: the name is taken by a %s server", ErrInvalid, s.Source, s.Name, src))
				continue
			}
			if len(out) == maxServers {
				errs = append(errs, fmt.Errorf("%w: %s server %q left out: more than %d servers", ErrInvalid, s.Source, s.Name, maxServers))
				continue
			}
			seen[strings.ToLower(s.Name)] = s.Source
			out = append(out, s)
		}
	}
	return out, errs
}
