package tools

import (
	"bytes"
	"embed"
	"encoding/json"
	"strings"

	"github.com/armadra/ama-rpc/llm"
)

// Tool names of the built-ins.
const (
	NameBash  = "bash"
	NameEdit  = "edit"
	NameGlob  = "glob"
	NameGrep  = "grep"
	NameLs    = "ls"
	NameRead  = "read"
	NameWrite = "write"
	// NameCodemode is the codemode tool (package codemode); its nested calls
	// are marked viaCodemode.
	NameCodemode = "codemode"
)

//go:embed descriptions/*.md
var descriptions embed.FS

// The argument schemas. They are written out by hand because key order is
// part of the contract: the declarations sent to the model must have the
// same shape (keys, order, types, required, enum, additionalProperties) as
// the reference's, see decls_test.go.
const (
	bashSchema = `{
  "type": "object",
  "properties": {
    "command": {"type": "string"},
    "timeoutMs": {"type": "integer"},
    "cwd": {"type": "string", "description": "Working directory (defaults to the project directory)"},
    "description": {"type": "string"},
    "background": {"type": "boolean"},
    "job": {"type": "string"},
    "action": {"type": "string", "enum": ["wait", "output", "stop"]}
  },
  "additionalProperties": false
}`

	editSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string"},
    "edits": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "oldText": {"type": "string", "description": "Text as it appears in the file now"},
          "newText": {"type": "string"}
        },
        "required": ["oldText", "newText"],
        "additionalProperties": false
      }
    },
    "replaceAll": {"type": "boolean"}
  },
  "required": ["path", "edits"],
  "additionalProperties": false
}`

	globSchema = `{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "description": "For example src/**/*.go"},
    "path": {"type": "string", "description": "Directory to search (defaults to the project)"},
    "limit": {"type": "integer", "description": "Maximum number of files, 200 if omitted"}
  },
  "required": ["pattern"],
  "additionalProperties": false
}`

	grepSchema = `{
  "type": "object",
  "properties": {
    "pattern": {"type": "string"},
    "path": {"type": "string", "description": "File or directory to search"},
    "glob": {"type": "string", "description": "Only files matching this glob, e.g. *.go"},
    "ignoreCase": {"type": "boolean"},
    "literal": {"type": "boolean"},
    "context": {"type": "integer", "description": "Lines shown around each match (0-5)"},
    "limit": {"type": "integer", "description": "Maximum number of matches, 100 if omitted"},
    "filesOnly": {"type": "boolean"}
  },
  "required": ["pattern"],
  "additionalProperties": false
}`

	lsSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Directory to list (defaults to the project)"},
    "limit": {"type": "integer", "description": "Maximum number of entries, 500 if omitted"}
  },
  "additionalProperties": false
}`

	readSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Path, absolute or relative to the project"},
    "offset": {"type": "integer", "description": "Line number to start at (1 is the first line)"},
    "limit": {"type": "integer", "description": "Number of lines to show"}
  },
  "required": ["path"],
  "additionalProperties": false
}`

	writeSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Path of the file, absolute or relative to the project"},
    "content": {"type": "string", "description": "The complete new content"}
  },
  "required": ["path", "content"],
  "additionalProperties": false
}`
)

// decl builds a declaration from the embedded description of name and a
// schema literal (compacted, key order kept).
func decl(name, schema string) llm.ToolDecl {
	desc, err := descriptions.ReadFile("descriptions/" + name + ".md")
	if err != nil {
		panic("tools: missing description for " + name)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(schema)); err != nil {
		panic("tools: bad schema for " + name + ": " + err.Error())
	}
	return llm.ToolDecl{
		Name:        name,
		Description: strings.TrimSpace(string(desc)),
		Parameters:  json.RawMessage(buf.Bytes()),
	}
}
