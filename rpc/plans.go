package rpc

import (
	"context"

	"github.com/armadra/ama-rpc/plan"
	"github.com/armadra/ama-rpc/session"
)

func handlePlanResponse(s *Server, c *command) {
	var p struct {
		PlanID         string `json:"planId"`
		Decision       string `json:"decision"`
		Mode           string `json:"mode"`
		Feedback       string `json:"feedback"`
		EditedMarkdown string `json:"editedMarkdown"`
	}
	if err := params(c, &p); err != nil {
		s.fail(c, err)
		return
	}
	reply := s.later(c)
	cur := s.current()
	cur.PlanResponse(session.PlanDecision{PlanID: p.PlanID, Decision: p.Decision, Mode: p.Mode, Feedback: p.Feedback,
		EditedMarkdown: p.EditedMarkdown}, func(out session.PlanOutcome, err error) {
		if err != nil {
			reply(nil, err)
			return
		}
		data := struct {
			PlanID   string `json:"planId"`
			Decision string `json:"decision"`
		}{out.PlanID, out.Decision}
		if out.Fresh == nil {
			reply(data, nil)
			return
		}
		// approve_fresh: a new session carries out the plan. This callback
		// runs on the old session's actor, which the switch must close, so
		// the switch happens on its own goroutine.
		go s.approveFresh(cur, out.Fresh, func(err error) { reply(data, err) })
	})
}

// approveFresh starts a new session (session_start reason new), adopts the
// approved plan there and answers once its first turn has started.
func (s *Server) approveFresh(old *session.Session, fp *session.FreshPlan, done func(error)) {
	if err := old.WaitIdle(context.Background()); err != nil {
		done(err)
		return
	}
	opts, err := old.Settings()
	if err != nil {
		done(err)
		return
	}
	opts.PermissionMode = fp.Mode
	next, err := session.New(s.opts.Deps, opts)
	if err != nil {
		done(err)
		return
	}
	s.attach(next)
	if err := next.Start("new"); err != nil {
		done(err)
		return
	}
	old.Close()
	next.AdoptPlan(*fp, func() { done(nil) })
}

func handleGetPlan(s *Server, c *command) {
	var p struct {
		PlanID string `json:"planId"`
	}
	if err := params(c, &p); err != nil {
		s.fail(c, err)
		return
	}
	pl, err := s.current().Plan(p.PlanID)
	if err != nil {
		s.fail(c, err)
		return
	}
	if pl == nil {
		s.ok(c, null)
		return
	}
	s.ok(c, pl)
}

func handleGetTodos(s *Server, c *command) {
	s.ok(c, plan.TodoList{Items: s.current().Todos()})
}
