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

func handleGetTasks(s *Server, _ *command, _ *none) (any, error) {
	tasks := []session.TaskInfo{}
	if r := s.registry(); r != nil {
		tasks = r.List()
	}
	return tasksResult{tasks}, nil
}

func handleGetAgents(s *Server, _ *command, _ *none) (any, error) {
	list := []session.AgentInfo{}
	if r := s.registry(); r != nil {
		list = r.Agents()
	}
	return agentsResult{list}, nil
}

// handleBackgroundTask answers before the moved tasks' tool results
// (release), so it is given the reply rather than returning its result.
func handleBackgroundTask(s *Server, _ *command, p *backgroundParams, reply reply) {
	var id string
	if len(p.TaskID) > 0 && string(p.TaskID) != "null" {
		if p.TaskID[0] != '"' || json.Unmarshal(p.TaskID, &id) != nil {
			reply(nil, fmt.Errorf("%w: taskId must be a string", errInvalidParams))
			return
		}
	}
	moved, release := []string{}, func() {}
	if r := s.registry(); r != nil {
		moved, release = r.Background(id, "host")
	}
	// The answer precedes the moved tasks' tool results.
	reply(backgroundResult{moved}, nil)
	release()
}
