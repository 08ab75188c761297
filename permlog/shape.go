package permlog

import (
	"path/filepath"
	"strings"

	"github.com/armadra/ama-rpc/internal/secrets"
)

// Path classes of a Shape.
const (
	PathSecret     = "secret"     // a credential path (internal/secrets) or ama's private data
	PathProject    = "project"    // inside the session directory
	PathHome       = "home"       // under HOME, outside the project
	PathTemp       = "temp"       // /tmp, /var/tmp, /dev/shm
	PathSystem     = "system"     // anything else absolute
	PathDynamic    = "dynamic"    // only known at run time
	PathUnresolved = "unresolved" // could not be resolved
)

// PathClass classifies an absolute path ("" is PathUnresolved) against the
// project root, HOME and ama's private directories. The secret class wins.
func PathClass(p, root, home string, private []string) string {
	if p == "" || !filepath.IsAbs(p) {
		return PathUnresolved
	}
	p = filepath.Clean(p)
	switch {
	case secrets.Reason(p) != "" || secrets.PrivateReason(p, private) != "":
		return PathSecret
	case secrets.Within(p, root):
		return PathProject
	case home != "" && home != "/" && secrets.Within(p, home):
		return PathHome
	case secrets.Within(p, "/tmp"), secrets.Within(p, "/var/tmp"), secrets.Within(p, "/dev/shm"):
		return PathTemp
	}
	return PathSystem
}

// ToolClass reduces a tool name to what a record may hold: names of
// built-in shape (letters, digits, _ - . :) up to 64 bytes, else "other".
func ToolClass(name string) string {
	if name == "" || len(name) > 64 {
		return "other"
	}
	if strings.IndexFunc(name, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.' || r == ':')
	}) >= 0 {
		return "other"
	}
	return name
}
