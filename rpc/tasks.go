package rpc

import (
	"encoding/json"
	"fmt"

	"github.com/armadra/ama-rpc/agents"
)

// get_tasks, get_agents and background_task answer from the current
// session's task registry (package agents); a session without one (the
// task tools are not enabled) has no tasks and no agents.

func (s *Server) registry() *agents.Registry {
	if cur := s.current(); cur != nil {
		r, _ := cur.Tasks().(*agents.Registry)
		return r
	}
	return nil
}

func handleGetTasks(s *Server, c *command) {
	tasks := []agents.TaskInfo{}
	if r := s.registry(); r != nil {
		tasks = r.Tasks()
	}
	s.ok(c, struct {
		Tasks []agents.TaskInfo `json:"tasks"`
	}{tasks})
}

func handleGetAgents(s *Server, c *command) {
	list := []agents.AgentInfo{}
	if r := s.registry(); r != nil {
		list = r.Agents()
	}
	s.ok(c, struct {
		Agents []agents.AgentInfo `json:"agents"`
	}{list})
}

func handleBackgroundTask(s *Server, c *command) {
	var p struct {
		TaskID json.RawMessage `json:"taskId"`
	}
	if err := params(c, &p); err != nil {
		s.fail(c, err)
		return
	}
	var id string
	if len(p.TaskID) > 0 && string(p.TaskID) != "null" {
		if p.TaskID[0] != '"' || json.Unmarshal(p.TaskID, &id) != nil {
			s.fail(c, fmt.Errorf("%w: taskId must be a string", errInvalidParams))
			return
		}
	}
	moved, release := []string{}, func() {}
	if r := s.registry(); r != nil {
		moved, release = r.Background(id, "host")
	}
	// The answer precedes the moved tasks' tool results.
	s.ok(c, struct {
		Backgrounded []string `json:"backgrounded"`
	}{moved})
	release()
}
