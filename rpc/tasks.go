package rpc

import (
	"encoding/json"
	"fmt"

	"github.com/armadra/ama-rpc/session"
)

// get_tasks, get_agents and background_task answer from the current
// session's task registry (session.Tasks); a session without one (the
// task tools are not enabled) has no tasks and no agents.

func (s *Server) registry() session.Tasks {
	if cur := s.current(); cur != nil {
		return cur.Tasks()
	}
	return nil
}

func handleGetTasks(s *Server, c *command) {
	tasks := []session.TaskInfo{}
	if r := s.registry(); r != nil {
		tasks = r.List()
	}
	s.ok(c, tasksResult{tasks})
}

func handleGetAgents(s *Server, c *command) {
	list := []session.AgentInfo{}
	if r := s.registry(); r != nil {
		list = r.Agents()
	}
	s.ok(c, agentsResult{list})
}

func handleBackgroundTask(s *Server, c *command) {
	var p backgroundParams
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
	s.ok(c, backgroundResult{moved})
	release()
}
