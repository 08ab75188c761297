package agents

import (
	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/llm"
)

// childModel is the model an ama child runs on (agents.md §5.2 model
// resolution): the call's model, else the type's definition model (not
// inherit), else config agents.<type>.model, else subagents.defaultModel,
// else the parent's current model. The aliases fast and strong map through
// models.aliases, which this build does not have: they run on the parent's
// model with a warning, as the spec says of a missing alias. A value that
// is not provider/model is skipped with a warning (the next source
// decides).
func (t *Task) childModel(parent llm.ModelRef) llm.ModelRef {
	r := t.reg
	sources := []struct{ from, v string }{
		{"task model", t.req.Model},
		{"definition model", t.typ.Model},
		{"agents." + t.typ.Name + ".model", r.cfg.External[t.typ.Name].Model},
		{"subagents.defaultModel", r.cfg.DefaultModel},
	}
	for _, s := range sources {
		switch s.v {
		case "", "inherit":
			continue
		case "fast", "strong":
			r.cfg.Log.Warn("model alias not configured (models.aliases); the sub-agent runs on the parent's model",
				zap.String("alias", s.v), zap.String("from", s.from), zap.String("agent", t.typ.Name))
			return parent
		}
		if p, id, ok := llm.ParseRef(s.v); ok {
			return llm.ModelRef{Provider: p, ID: id}
		}
		r.cfg.Log.Warn("model is not provider/model; ignored", zap.String("model", s.v), zap.String("from", s.from))
	}
	return parent
}
