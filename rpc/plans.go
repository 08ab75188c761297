package rpc

import (
	"github.com/armadra/ama-rpc/plan"
	"github.com/armadra/ama-rpc/session"
)

func handlePlanResponse(s *Server, _ *command, p *planResponseParams, reply reply) {
	fresh := p.Decision == string(plan.DecisionApproveFresh)
	if fresh {
		// The switch to a fresh session holds back later commands until
		// the new session runs the plan.
		s.beginSwitch()
	}
	cur := s.current()
	cur.PlanResponse(session.PlanDecision{PlanID: p.PlanID, Decision: p.Decision, Mode: p.Mode, Feedback: p.Feedback,
		EditedMarkdown: p.EditedMarkdown}, func(out session.PlanOutcome, err error) {
		data := planResponseResult{out.PlanID, out.Decision}
		if !fresh {
			if err != nil {
				reply(nil, err)
				return
			}
			reply(data, nil)
			return
		}
		// This runs on the old session's actor, which the switch closes,
		// so the switch continues on the dispatcher.
		s.onDispatcher(func() {
			switch {
			case err != nil:
				reply(nil, err)
			case out.Fresh == nil:
				reply(data, nil)
			default:
				s.approveFresh(cur, out.Fresh, func(err error) { reply(data, err) })
			}
			s.endSwitch()
		})
	})
}

// approveFresh switches to a fresh session (session.OpenFreshPlan,
// session_start reason new, with the old session's SessionEnd and the new
// one's SessionStart), adopts the approved plan there and answers once its
// first turn has started (dispatcher only; old is idle: plan responses
// wait for the run to end).
func (s *Server) approveFresh(old *session.Session, fp *session.FreshPlan, done func(error)) {
	opts, err := old.Settings()
	if err != nil {
		done(err)
		return
	}
	next, err := s.opts.Sessions.Open(session.Spec{Kind: session.OpenFreshPlan, Options: opts, Plan: fp})
	if err != nil {
		done(err)
		return
	}
	if err := s.opts.Sessions.Switch(next, session.OpenFreshPlan.Reason(), s.attach); err != nil {
		done(err)
		return
	}
	next.AdoptPlan(*fp, done)
}

func handleGetPlan(s *Server, _ *command, p *getPlanParams) (any, error) {
	pl, err := s.current().Plan(p.PlanID)
	if err != nil {
		return nil, err
	}
	if pl == nil {
		return null, nil
	}
	return pl, nil
}

func handleGetTodos(s *Server, _ *command, _ *none) (plan.TodoList, error) {
	return plan.TodoList{Items: s.current().Todos()}, nil
}
