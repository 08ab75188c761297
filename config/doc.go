// Package config locates ama's directories and reads its configuration
// files (JSON with comments and trailing commas): the user file
// <configDir>/config.json and the project file <cwd>/.ama/config.json.
//
// Trust boundaries are applied by the consumers (the permission layer
// ignores what a project file may not loosen); this package only parses.
// Concurrency: values are plain data; functions keep no state.
package config
