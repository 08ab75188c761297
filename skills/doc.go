// Package skills discovers skills: markdown files (SKILL.md with a small
// front matter) that tell the agent how to do one kind of task. The system
// prompt lists them; get_commands offers them as skill:<name>.
//
// Concurrency: Discover and Builtin do file I/O and return plain values;
// they keep no state.
package skills
