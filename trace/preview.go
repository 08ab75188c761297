package trace

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/armadra/ama-rpc/internal/jsonstr"
	"github.com/armadra/ama-rpc/llm"
)

// previews returns the previews of the window's nodes in tree order. A key
// that repeats (tool call ids are unique only per reply with some
// providers) keeps its first node.
func (b *builder) previews(turns []*Turn) []Preview {
	out := []Preview{}
	seen := map[string]bool{}
	add := func(p Preview) {
		if (p.Input == nil && p.Output == nil && p.Args == nil && p.Result == nil) || seen[p.Key] {
			return
		}
		seen[p.Key] = true
		out = append(out, p)
	}
	for _, t := range turns {
		var in *string
		if u := b.prompts[t]; u != nil {
			in = clip(u.Content.PlainText(), OtherPreviewChars)
		}
		add(Preview{Key: "turn:" + t.ID, Input: in})
		for _, s := range t.Steps {
			add(Preview{Key: "step:" + s.ID, Output: clip(b.replies[s].Text(""), OtherPreviewChars)})
			for _, tool := range s.Tools {
				p := Preview{Key: "tool:" + tool.ID}
				if tc := b.calls[tool]; tc != nil {
					args := tc.RawArguments
					if args == "" {
						args = string(tc.Arguments)
					}
					p.Args = clip(args, ArgsPreviewChars)
				}
				if r := b.results[tool]; r != nil {
					p.Result = clip(llm.JoinText(r.Content, "\n"), OtherPreviewChars)
				}
				add(p)
			}
		}
	}
	return out
}

// clip redacts s and cuts it to n characters with "…" at the cut; "" is
// nil (no preview). Huge texts are first cut far beyond n (redaction only
// shortens what it replaces, so the margin keeps the result exact unless
// secrets of thousands of characters come before the cut) so a large tool
// result costs no more than its preview.
func clip(s string, n int) *string {
	if s == "" {
		return nil
	}
	if margin := 4*n + 1024; len(s) > margin*utf8.UTFMax {
		s = Truncate(s, margin)
	}
	s = Truncate(Redact(s), n)
	return &s
}

// Truncate cuts s to n characters (runes), appending "…" when it cut.
func Truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for k := range s {
		if i == n {
			return s[:k] + "…"
		}
		i++
	}
	return s
}

// Redacted replaces a secret.
const Redacted = "[redacted]"

var (
	// tokenPattern matches bearer tokens and the usual API key and access
	// token shapes.
	tokenPattern = regexp.MustCompile(`(?i:\bbearer\s+[A-Za-z0-9._~+/=\-]{8,})` +
		`|\b(?:sk|pk|rk|gsk|xai)[-_][A-Za-z0-9_\-]{16,}` +
		`|\bgh[pousr]_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}|\bglpat-[A-Za-z0-9_\-]{20,}` +
		`|\bxox[abprs]-[A-Za-z0-9\-]{10,}|\bAKIA[0-9A-Z]{16}\b|\bAIza[0-9A-Za-z_\-]{35}` +
		`|\beyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}`)
	// assignPattern matches secrets assigned to a telling name
	// (API_KEY=…, "password": "…", token: …); the name is kept.
	assignPattern = regexp.MustCompile(`(?i)(\b[A-Za-z0-9_\-]*(?:api[_\-]?key|secret|token|passw(?:or)?d|credential)s?["']?\s*[:=]\s*["']?)([^\s"',;&]{6,})`)
)

// Redact removes what looks like a secret from s: bearer tokens, API keys
// and access tokens of the common providers, JWTs, and values assigned to
// names such as API_KEY, secret, token or password.
func Redact(s string) string {
	s = tokenPattern.ReplaceAllString(s, Redacted)
	return assignPattern.ReplaceAllStringFunc(s, func(m string) string {
		sub := assignPattern.FindStringSubmatch(m)
		if strings.HasPrefix(sub[2], Redacted) || strings.Trim(sub[2], "0123456789.") == "" {
			return m // already redacted, or a number (maxTokens: 4096)
		}
		return sub[1] + Redacted
	})
}

// Previews are written as one object, keys in tree order (a Go map
// would sort them).
type Previews []Preview

// MarshalJSON writes {"<key>":{input,output,args,result}, …}, absent
// fields left out.
func (p Previews) MarshalJSON() ([]byte, error) {
	out := []byte{'{'}
	for i, pv := range p {
		if i > 0 {
			out = append(out, ',')
		}
		out = jsonstr.Append(out, pv.Key, jsonstr.Wire)
		out = append(out, ":{"...)
		n := 0
		for _, f := range []struct {
			name string
			v    *string
		}{{"input", pv.Input}, {"output", pv.Output}, {"args", pv.Args}, {"result", pv.Result}} {
			if f.v == nil {
				continue
			}
			if n > 0 {
				out = append(out, ',')
			}
			n++
			out = append(out, '"')
			out = append(out, f.name...)
			out = append(out, `":`...)
			out = jsonstr.Append(out, *f.v, jsonstr.Wire)
		}
		out = append(out, '}')
	}
	return append(out, '}'), nil
}
