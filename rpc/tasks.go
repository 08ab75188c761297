package rpc

import (
	"encoding/json"
	"fmt"
)

// ama-rpc has no sub-agent task tool, so the task registry is always
// empty: get_tasks and get_agents list nothing and background_task moves
// nothing (the reference's answers when no registry is wired).

func handleGetTasks(s *Server, c *command) {
	s.ok(c, struct {
		Tasks []struct{} `json:"tasks"`
	}{[]struct{}{}})
}

func handleGetAgents(s *Server, c *command) {
	s.ok(c, struct {
		Agents []struct{} `json:"agents"`
	}{[]struct{}{}})
}

func handleBackgroundTask(s *Server, c *command) {
	var p struct {
		TaskID json.RawMessage `json:"taskId"`
	}
	if err := params(c, &p); err != nil {
		s.fail(c, err)
		return
	}
	if len(p.TaskID) > 0 && string(p.TaskID) != "null" && p.TaskID[0] != '"' {
		s.fail(c, fmt.Errorf("%w: taskId must be a string", errInvalidParams))
		return
	}
	s.ok(c, struct {
		Backgrounded []string `json:"backgrounded"`
	}{[]string{}})
}
