package sandbox

import "strings"

// Output fragments that suggest the sandbox refused something
// (lower case; matched case-insensitively).
var (
	denialMarks = []string{
		"operation not permitted", "read-only file system", "eperm", "erofs", "permission denied", "eacces",
		// The jail's init: a protected path created or replaced (126).
		"ama-rpc sandbox: the command was stopped",
	}
	networkMarks = []string{
		"could not resolve host", "enotfound", "eai_again", "getaddrinfo", "nodename nor servname",
		"temporary failure in name resolution", "name or service not known", "network is unreachable",
		"enetunreach", "couldn't connect to server", "failed to connect", "econnrefused",
		"could not resolve hostname", "connection refused",
	}
)

// LooksLikeDenial reports whether the output of a failed sandboxed command
// suggests the sandbox refused a write, a read or (with the network denied)
// a connection. It is a textual guess and may be a false positive.
func LooksLikeDenial(output string, networkDenied bool) bool {
	lo := strings.ToLower(output)
	for _, m := range denialMarks {
		if strings.Contains(lo, m) {
			return true
		}
	}
	if networkDenied {
		for _, m := range networkMarks {
			if strings.Contains(lo, m) {
				return true
			}
		}
	}
	return false
}

// Hint is the one line appended to the output of a failed sandboxed
// command that LooksLikeDenial.
func Hint(networkDenied bool) string {
	where := "writes only in the project and temp directories, credential files unreadable"
	if networkDenied {
		where += ", no network"
	}
	return "[sandbox: this command ran in ama's OS sandbox (" + where + "). If it failed because of that, " +
		"rerun it with sandbox:false, which runs it outside the sandbox and needs the user's approval.]"
}
