package classifier

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// ErrInvalidReply is wrapped by every error of the reply parsers.
var ErrInvalidReply = errors.New("invalid classifier reply")

// ReasonPlaceholder stands in for a missing or empty reason.
const ReasonPlaceholder = "no reason given"

// maxReplyBytes bounds the text a parser looks at; a longer reply cannot be
// the short object that was asked for.
const maxReplyBytes = 16 << 10

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidReply, fmt.Sprintf(format, args...))
}

// stripFence removes one code fence around the whole text: an opening line
// of exactly ``` or ```json (trailing blanks allowed) and a closing ``` on
// its own line at the very end. Text without a fence is returned unchanged.
func stripFence(s string) (string, error) {
	if !strings.HasPrefix(s, "```") {
		return s, nil
	}
	nl := strings.IndexByte(s, '\n')
	if nl < 0 {
		return "", invalid("code fence without content")
	}
	if lang := strings.TrimSpace(s[3:nl]); lang != "" && lang != "json" {
		return "", invalid("code fence of language %q", lang)
	}
	body, ok := strings.CutSuffix(s[nl+1:], "```")
	if !ok {
		return "", invalid("unterminated code fence")
	}
	if !strings.HasSuffix(strings.TrimRight(body, " \t"), "\n") {
		return "", invalid("closing code fence is not on its own line")
	}
	return strings.TrimSpace(body), nil
}

// strictObject decodes text, which must be one JSON object and nothing
// else, into its members. Keys outside allowed, duplicate keys and any text
// after the object are errors.
func strictObject(text string, allowed ...string) (map[string]json.RawMessage, error) {
	if len(text) > maxReplyBytes {
		return nil, invalid("reply is %d bytes long", len(text))
	}
	if !strings.HasPrefix(text, "{") || !strings.HasSuffix(text, "}") {
		return nil, invalid("reply is not exactly one JSON object")
	}
	dec := json.NewDecoder(strings.NewReader(text))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, invalid("reply is not a JSON object")
	}
	out := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, invalid("malformed JSON: %v", err)
		}
		key, _ := tok.(string)
		known := false
		for _, a := range allowed {
			known = known || a == key
		}
		if !known {
			return nil, invalid("unexpected key %q", key)
		}
		if _, dup := out[key]; dup {
			return nil, invalid("duplicate key %q", key)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, invalid("malformed JSON: %v", err)
		}
		out[key] = v
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, invalid("malformed JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, invalid("text after the JSON object")
	}
	return out, nil
}

// jsonString decodes raw, which must be a JSON string (not null).
func jsonString(raw json.RawMessage, name string) (string, error) {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", invalid("%s is not a string", name)
	}
	return s, nil
}

// ParseReply parses a single-stage reply (spec 11.1). After trimming, the
// text may be wrapped in one code fence (``` or ```json); inside it must
// start with "{", end with "}" and be exactly one JSON object whose keys are
// "decision" and optionally "reason", each at most once. decision must be
// the string "allow" or "ask", exactly so. reason must be a string when
// present; it is whitespace-collapsed and cut to MaxReasonChars, and a
// missing or blank reason becomes ReasonPlaceholder.
//
// Extra keys are rejected rather than ignored: a reply that does not follow
// the requested shape says little about whether the model followed the rest
// of its instructions, and a rejected reply only means the user is asked.
// Every error wraps ErrInvalidReply.
func ParseReply(text string) (allow bool, reason string, err error) {
	text, err = stripFence(strings.TrimSpace(text))
	if err != nil {
		return false, "", err
	}
	obj, err := strictObject(text, "decision", "reason")
	if err != nil {
		return false, "", err
	}
	raw, ok := obj["decision"]
	if !ok {
		return false, "", invalid("decision is missing")
	}
	d, err := jsonString(raw, "decision")
	if err != nil {
		return false, "", err
	}
	switch d {
	case "allow":
		allow = true
	case "ask":
	default:
		return false, "", invalid("decision %q is neither allow nor ask", d)
	}
	reason = ReasonPlaceholder
	if raw, ok := obj["reason"]; ok {
		r, err := jsonString(raw, "reason")
		if err != nil {
			return false, "", err
		}
		if r = clipReason(r); r != "" {
			reason = r
		}
	}
	return allow, reason, nil
}

// ParseFastReply parses the fast stage of the two-stage classifier: after
// trimming whitespace the text must be exactly "0" (allow) or "1" (needs
// the detailed review). Anything else wraps ErrInvalidReply.
func ParseFastReply(text string) (review bool, err error) {
	switch t := strings.TrimSpace(text); t {
	case "0":
		return false, nil
	case "1":
		return true, nil
	default:
		if len(t) > 40 {
			t = t[:40] + "…"
		}
		return false, invalid("fast stage answered %q instead of 0 or 1", t)
	}
}

// Tiers of the detailed stage and the decisions they may go with.
var tierDecisions = map[string][]string{
	"hard_deny":       {"block"},
	"soft_deny":       {"block"},
	"allow":           {"allow"},
	"explicit_intent": {"allow"},
	"none":            {"allow", "block"},
}

// ParseDetailedReply parses the detailed stage of the two-stage classifier
// (spec 11.2). The text, trimmed, must be exactly one JSON object with the
// string members decision, tier and reason, each exactly once and nothing
// else; no code fence or other wrapper is tolerated. decision is "allow" or
// "block"; tier is one of hard_deny, soft_deny, allow, explicit_intent, none
// and must agree with the decision (allow goes with allow, explicit_intent or
// none; block with hard_deny, soft_deny or none); reason must not be blank.
// The returned reason is whitespace-collapsed and cut to MaxReasonChars.
// Every error wraps ErrInvalidReply.
func ParseDetailedReply(text string) (allow bool, tier, reason string, err error) {
	obj, err := strictObject(strings.TrimSpace(text), "decision", "tier", "reason")
	if err != nil {
		return false, "", "", err
	}
	get := func(name string) (string, error) {
		raw, ok := obj[name]
		if !ok {
			return "", invalid("%s is missing", name)
		}
		return jsonString(raw, name)
	}
	decision, err := get("decision")
	if err != nil {
		return false, "", "", err
	}
	if tier, err = get("tier"); err != nil {
		return false, "", "", err
	}
	if reason, err = get("reason"); err != nil {
		return false, "", "", err
	}
	if decision != "allow" && decision != "block" {
		return false, "", "", invalid("decision %q is neither allow nor block", decision)
	}
	ds, ok := tierDecisions[tier]
	if !ok {
		return false, "", "", invalid("unknown tier %q", tier)
	}
	consistent := false
	for _, d := range ds {
		consistent = consistent || d == decision
	}
	if !consistent {
		return false, "", "", invalid("tier %q does not go with decision %q", tier, decision)
	}
	if reason = clipReason(reason); reason == "" {
		return false, "", "", invalid("reason is empty")
	}
	return decision == "allow", tier, reason, nil
}
