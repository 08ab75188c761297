package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/armadra/ama-rpc/internal/jsonobj"
	"github.com/armadra/ama-rpc/llm"
)

// TaskCustomType is the customType of the first entry of a task
// sub-session.
const TaskCustomType = "ama.task"

// FirstPromptMax is the length limit of Info.FirstPrompt in UTF-16 code
// units (JavaScript string length).
const FirstPromptMax = 200

// Info summarises one session file for a picker.
type Info struct {
	Path     string
	ID       string
	Cwd      string
	Created  time.Time // header timestamp; zero if it does not parse
	Modified time.Time // file modification time
	// Name is the name of the last session_info entry that has one.
	Name string
	// MessageCount counts message entries of every role except system, on
	// all branches.
	MessageCount int
	// FirstPrompt is the text of the first user message (string content, or
	// its text blocks joined), cut to FirstPromptMax UTF-16 units.
	FirstPrompt   string
	ParentSession string
	// IsSubagent: the header has parentSession and the first entry is a
	// custom ama.task entry (§5.5). Forks have parentSession but are not
	// sub-agents.
	IsSubagent bool
}

// List summarises the session files (*.jsonl) in dir, one cwd's directory,
// newest first (by file name, which starts with the creation time). Files
// that cannot be read or are corrupt are skipped; a missing dir is empty.
func List(dir string) ([]Info, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var out []Info
	for _, de := range ents {
		if de.IsDir() || !strings.HasSuffix(de.Name(), FileSuffix) {
			continue
		}
		if info, err := ReadInfo(filepath.Join(dir, de.Name())); err == nil {
			out = append(out, info)
		}
	}
	sortInfos(out)
	return out, nil
}

// ListAll lists the sessions of every cwd under the sessions root (every
// subdirectory except hidden ones such as .trash), newest first.
func ListAll(root string) ([]Info, error) {
	ents, err := os.ReadDir(root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var out []Info
	for _, de := range ents {
		if !de.IsDir() || strings.HasPrefix(de.Name(), ".") {
			continue
		}
		infos, err := List(filepath.Join(root, de.Name()))
		if err != nil {
			continue
		}
		out = append(out, infos...)
	}
	sortInfos(out)
	return out, nil
}

func sortInfos(infos []Info) {
	sort.SliceStable(infos, func(i, j int) bool {
		a, b := filepath.Base(infos[i].Path), filepath.Base(infos[j].Path)
		if a != b {
			return a > b
		}
		return infos[i].Path > infos[j].Path
	})
}

// ReadInfo summarises one session file with the read-only rules of §5.3
// (no lock, no repair). It streams the file and keeps no entries.
func ReadInfo(path string) (Info, error) {
	f, err := os.Open(path)
	if err != nil {
		return Info{}, openError(path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Info{}, openError(path, err)
	}
	info := Info{Path: path, Modified: st.ModTime()}
	first := true
	havePrompt := false
	p := parser{path: path, bufSize: bufferSize(f)}
	p.visit = func(text []byte, fields []jsonobj.Member, parts entryParts) {
		typ := parts.typ.Str(text)
		if first {
			first = false
			if typ == TypeCustom {
				if f, ok := jsonobj.Last(text, fields, "customType"); ok && f.StrIs(text, TaskCustomType) {
					info.IsSubagent = true
				}
			}
		}
		switch typ {
		case TypeSessionInfo:
			if f, ok := jsonobj.Last(text, fields, "name"); ok && f.IsString(text) {
				info.Name = f.Str(text)
			}
		case TypeMessage:
			f, ok := jsonobj.Last(text, fields, "message")
			if !ok {
				return
			}
			msg := f.Val(text)
			role, _ := jsonobj.StringField(msg, "role")
			if role == llm.RoleSystem {
				return
			}
			info.MessageCount++
			if !havePrompt && role == llm.RoleUser {
				havePrompt = true
				info.FirstPrompt = cutUTF16(promptText(jsonobj.Field(msg, "content")), FirstPromptMax)
			}
		}
	}
	if err := p.run(f); err != nil {
		return Info{}, err
	}
	h := p.header
	info.ID, info.Cwd, info.ParentSession = h.ID, h.Cwd, h.ParentSession
	info.IsSubagent = info.IsSubagent && h.ParentSession != ""
	if t, err := time.Parse(time.RFC3339Nano, h.Timestamp); err == nil {
		info.Created = t
	}
	return info, nil
}

// promptText returns string content, or the text blocks of block content
// joined without separator.
func promptText(raw []byte) string {
	if len(raw) == 0 {
		return ""
	}
	if raw[0] == '"' {
		return jsonobj.Unquote(raw)
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return ""
	}
	var sb strings.Builder
	for _, b := range blocks {
		if b.Type == "text" {
			sb.WriteString(b.Text)
		}
	}
	return sb.String()
}

// cutUTF16 cuts s to at most n UTF-16 code units (JavaScript slice(0, n)),
// never splitting a surrogate pair.
func cutUTF16(s string, n int) string {
	units := 0
	for i, r := range s {
		w := utf16.RuneLen(r)
		if w < 0 {
			w = 1
		}
		if units+w > n {
			return s[:i]
		}
		units += w
	}
	return s
}

// maxHeaderLine bounds the line ReadHeader reads: a header is a few
// hundred bytes (two paths at most); a first line longer than this is no
// header, and the file is not read further.
const maxHeaderLine = 1 << 20

// ReadHeader returns the header of the session file at path with the
// read-only rules of §5.3 (no lock, no repair), reading only up to the
// header line: who a session is (its id, its cwd) before anyone opens it.
func ReadHeader(path string) (Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return Header{}, openError(path, err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(io.LimitReader(f, maxHeaderLine), 4096)
	var line []byte
	for {
		b, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) { // a long line: keep reading it
			line = append(line, b...)
			continue
		}
		line = append(line, b...)
		if err != nil && err != io.EOF {
			return Header{}, openError(path, err)
		}
		if !isBlank(line) || err == io.EOF {
			break
		}
		line = line[:0] // a blank line before the header is skipped
	}
	p := parser{path: path, bufSize: len(line) + 1} // the header line alone: no entry is read
	if err := p.run(bytes.NewReader(line)); err != nil {
		return Header{}, err
	}
	return p.header, nil
}
