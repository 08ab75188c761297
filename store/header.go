package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/armadra/ama-rpc/internal/jsonobj"
)

// FormatVersion is the only session format version this package reads and
// writes.
const FormatVersion = 1

// HeaderType is the "type" of the header line.
const HeaderType = "session"

// TimeFormat is the ISO 8601 form of entry and header timestamps
// (JavaScript Date.prototype.toISOString, always UTC with milliseconds).
const TimeFormat = "2006-01-02T15:04:05.000Z"

// FormatTime formats t like JavaScript's toISOString.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeFormat) }

// Header is the first line of a session file. Its JSON keys are, in order,
// type, version, id, timestamp, cwd, agent, parentSession (omitted when
// empty).
type Header struct {
	Type      string    `json:"type"`    // always "session"
	Version   int       `json:"version"` // always 1
	ID        string    `json:"id"`      // the session id (uuid)
	Timestamp string    `json:"timestamp"`
	Cwd       string    `json:"cwd"`
	Agent     AgentInfo `json:"agent"`
	// ParentSession is the path of the source file of a fork or a task
	// sub-session.
	ParentSession string `json:"parentSession,omitempty"`
}

// AgentInfo names the program that wrote a session.
type AgentInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// NewHeader returns a version-1 header written by ama agentVersion.
func NewHeader(id string, created time.Time, cwd, agentVersion string) Header {
	return Header{
		Type: HeaderType, Version: FormatVersion, ID: id, Timestamp: FormatTime(created),
		Cwd: cwd, Agent: AgentInfo{Name: "ama", Version: agentVersion},
	}
}

var errBadHeader = errors.New("invalid header")

// check validates a header that is about to be written.
func (h *Header) check() error {
	if h.Type != HeaderType || h.Version != FormatVersion || h.ID == "" || h.Cwd == "" {
		return fmt.Errorf("%w: need type %q, version %d, id and cwd", errBadHeader, HeaderType, FormatVersion)
	}
	return nil
}

// appendJSON appends the header line (without newline).
func (h *Header) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"type":`...)
	dst = appendJSONString(dst, h.Type)
	dst = append(dst, `,"version":`...)
	dst = strconv.AppendInt(dst, int64(h.Version), 10)
	dst = append(dst, `,"id":`...)
	dst = appendJSONString(dst, h.ID)
	dst = append(dst, `,"timestamp":`...)
	dst = appendJSONString(dst, h.Timestamp)
	dst = append(dst, `,"cwd":`...)
	dst = appendJSONString(dst, h.Cwd)
	dst = append(dst, `,"agent":{"name":`...)
	dst = appendJSONString(dst, h.Agent.Name)
	dst = append(dst, `,"version":`...)
	dst = appendJSONString(dst, h.Agent.Version)
	dst = append(dst, '}')
	if h.ParentSession != "" {
		dst = append(dst, `,"parentSession":`...)
		dst = appendJSONString(dst, h.ParentSession)
	}
	return append(dst, '}')
}

// MarshalJSON writes the header in its canonical key order.
func (h Header) MarshalJSON() ([]byte, error) { return h.appendJSON(nil), nil }

// parseHeader validates the first non-blank line (already scanned into
// fields) per §5.2 and returns the header. Fields other than type, version,
// id and cwd are read leniently: a timestamp or agent of the wrong type is
// left empty.
func parseHeader(path string, text []byte, kind jsonobj.Kind, fields []jsonobj.Member) (Header, error) {
	var h Header
	if kind != jsonobj.Object {
		return h, corrupt(path, 0, ReasonMissingHeader)
	}
	if f, ok := jsonobj.Last(text, fields, "type"); !ok || !f.StrIs(text, HeaderType) {
		return h, corrupt(path, 0, ReasonMissingHeader)
	}
	h.Type = HeaderType
	f, ok := jsonobj.Last(text, fields, "version")
	if !ok {
		return h, corrupt(path, 0, unsupportedVersion("undefined"))
	}
	raw := f.Val(text)
	if v, err := strconv.ParseFloat(string(raw), 64); err != nil || v != FormatVersion {
		shown := string(raw)
		if f.IsString(text) {
			shown = f.Str(text) // String("2") is 2
		}
		return h, corrupt(path, 0, unsupportedVersion(shown))
	}
	h.Version = FormatVersion
	id, okID := jsonobj.Last(text, fields, "id")
	cwd, okCwd := jsonobj.Last(text, fields, "cwd")
	if !okID || !okCwd || !id.IsString(text) || !cwd.IsString(text) {
		return h, corrupt(path, 0, ReasonMalformedHeader)
	}
	h.ID, h.Cwd = id.Str(text), cwd.Str(text)
	if f, ok := jsonobj.Last(text, fields, "timestamp"); ok && f.IsString(text) {
		h.Timestamp = f.Str(text)
	}
	if f, ok := jsonobj.Last(text, fields, "agent"); ok && text[f.ValStart] == '{' {
		var a struct {
			Name    any `json:"name"`
			Version any `json:"version"`
		}
		if json.Unmarshal(f.Val(text), &a) == nil {
			h.Agent.Name, _ = a.Name.(string)
			h.Agent.Version, _ = a.Version.(string)
		}
	}
	if f, ok := jsonobj.Last(text, fields, "parentSession"); ok && f.IsString(text) {
		h.ParentSession = f.Str(text)
	}
	return h, nil
}

func unsupportedVersion(v string) string {
	return fmt.Sprintf("%s %s (this ama reads version %d)", ReasonUnsupportedVersion, v, FormatVersion)
}
