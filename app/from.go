package app

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/armadra/ama-rpc/internal/i18n"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/session"
	"github.com/armadra/ama-rpc/store"
)

// fromMessage is the user message --from picked: its text (text blocks
// joined by a blank line) and its images.
type fromMessage struct {
	text   string
	images []*llm.ImageContent
}

// parseFrom splits a --from value, id or id#n: the id (or the start of
// one) is not empty, n is a decimal number of at least 1 (0: the last
// message). The last '#' separates them.
func parseFrom(spec string) (id string, n int, ok bool) {
	i := strings.LastIndexByte(spec, '#')
	if i < 0 {
		if strings.TrimSpace(spec) == "" {
			return "", 0, false
		}
		return spec, 0, true
	}
	id, num := spec[:i], spec[i+1:]
	if strings.TrimSpace(id) == "" {
		return "", 0, false
	}
	if num == "" || strings.TrimLeft(num, "0123456789") != "" {
		return "", 0, false
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 1 {
		return "", 0, false
	}
	return id, n, true
}

// resolveFrom reads the message --from names, read-only (the session may
// be open elsewhere): its number counts the user messages in file order,
// every branch and origin included (steering, follow-ups, notifications),
// from 1; without #n the last one. A session that is not found, or
// whose id prefix fits several, is a session error (exit 5); a number
// past the end, or a session without user messages, a usage error (2).
func resolveFrom(sessionsDir, cwd, spec string, lang i18n.Lang) (*fromMessage, error) {
	id, n, ok := parseFrom(spec)
	if !ok {
		return nil, fmt.Errorf("%w: %s", errUsage, i18n.T(lang, i18n.CLIBadFrom, spec))
	}
	path, err := findSessionFile(sessionsDir, cwd, id)
	if err != nil {
		return nil, fmt.Errorf("%w: --from: %v", errSession, err)
	}
	snap, err := store.ReadSnapshot(path)
	if err != nil {
		return nil, fmt.Errorf("%w: --from: %v", errSession, err)
	}
	// Only the picked message is decoded: the role read with each line
	// (store's message facts) tells the user messages apart.
	var pick *store.Entry
	count := 0
	for _, e := range snap.Entries {
		if e.NotUser() {
			continue
		}
		if f := e.MessageFacts(); f == nil || f.Role != llm.RoleUser {
			if m, err := e.Message(); err != nil || m.MessageRole() != llm.RoleUser {
				continue
			}
		}
		count++
		if n == 0 || count == n {
			pick = e
		}
		if count == n {
			break
		}
	}
	switch {
	case count == 0:
		return nil, fmt.Errorf("%w: %s", errUsage, i18n.T(lang, i18n.PrintFromNoUser, snap.Header.ID))
	case pick == nil:
		return nil, fmt.Errorf("%w: %s", errUsage, i18n.T(lang, i18n.PrintFromTooFew, snap.Header.ID, n, count))
	}
	m, err := pick.Message()
	if err != nil {
		return nil, fmt.Errorf("%w: --from: %s: %v", errSession, path, err)
	}
	picked, ok := m.(*llm.UserMessage)
	if !ok {
		return nil, fmt.Errorf("%w: --from: %s: entry %s is no user message", errSession, path, pick.ID)
	}
	out := &fromMessage{text: picked.Content.Text}
	if picked.Content.IsBlocks {
		out.text = llm.JoinText(picked.Content.Blocks, "\n\n")
		out.images = picked.Content.Images()
	}
	return out, nil
}

// findSessionFile is the file of the session whose id is id, or else
// starts with id (ama's rule for --fork and --from; --resume uses it
// too): an exact id wins (the first in session.SessionDirs' order, as
// session.FindSession finds it), else a prefix that fits one session.
// A prefix that fits several is an error naming up to ten of them. One
// walk of the directories serves both.
func findSessionFile(sessionsDir, cwd, id string) (string, error) {
	if id == "" || strings.ContainsAny(id, `/\*?[`) { // no path, no glob: an id is a name
		return "", fmt.Errorf("%w: no session %q under %s", store.ErrNotFound, id, sessionsDir)
	}
	var found []string
	for _, dir := range session.SessionDirs(sessionsDir, cwd) {
		ents, err := os.ReadDir(dir) // sorted: the oldest of files given one id first
		if err != nil {
			continue
		}
		for _, f := range ents {
			fid, ok := store.IDFromFileName(f.Name())
			switch {
			case f.IsDir() || !ok || !strings.HasPrefix(fid, id):
			case fid == id:
				return filepath.Join(dir, f.Name()), nil
			default:
				found = append(found, filepath.Join(dir, f.Name()))
			}
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("%w: no session %s under %s", store.ErrNotFound, id, sessionsDir)
	case 1:
		return found[0], nil
	}
	ids := make([]string, 0, 10)
	for _, p := range found[:min(len(found), 10)] {
		fid, _ := store.IDFromFileName(p)
		ids = append(ids, fid)
	}
	return "", fmt.Errorf("the session id prefix %s fits %d sessions: %s", id, len(found), strings.Join(ids, ", "))
}
