package classifier_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/armadra/ama-rpc/classifier"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/llm/fake"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// str returns a pointer to s (script fields are pointers).
func str(s string) *string { return &s }

// say is a scripted reply with text s and a normal stop.
func say(s string) fake.Response { return fake.Response{Text: str(s)} }

// cutOff is a scripted reply with text s that hit the output limit.
func cutOff(s string) fake.Response { return fake.Response{Text: str(s), StopReason: "length"} }

// failing is a scripted provider failure of the given kind.
func failing(kind string) fake.Response { return fake.Response{Error: &fake.ErrorSpec{Kind: kind}} }

const (
	allowJSON = `{"decision":"allow","reason":"runs the project's tests"}`
	askJSON   = `{"decision":"ask","reason":"pushes to a remote"}`
)

// usageLog records OnUsage calls.
type usageLog struct {
	mu    sync.Mutex
	kinds []string
	usage []llm.Usage
}

func (u *usageLog) record(kind string, m *llm.Model, us llm.Usage) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.kinds = append(u.kinds, kind)
	u.usage = append(u.usage, us)
}

func (u *usageLog) snapshot() ([]string, []llm.Usage) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.kinds...), append([]llm.Usage(nil), u.usage...)
}

// recorder remembers the requests it forwards.
type recorder struct {
	next llm.Provider
	mu   sync.Mutex
	reqs []*llm.Request
}

func (r *recorder) Stream(ctx context.Context, req *llm.Request, emit func(llm.StreamEvent, *llm.AssistantMessage)) (*llm.AssistantMessage, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	return r.next.Stream(ctx, req, emit)
}

func (r *recorder) requests() []*llm.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*llm.Request(nil), r.reqs...)
}

// rig is a classifier wired to a scripted fake provider.
type rig struct {
	fake  *fake.Provider
	rec   *recorder
	usage *usageLog
	c     *classifier.Classifier
}

// newRig builds a classifier over a script; the script errors once it is
// exhausted so an unexpected extra request cannot pass as an answer. o's
// Provider, Model and OnUsage are filled in.
func newRig(t *testing.T, o classifier.Options, responses ...fake.Response) *rig {
	t.Helper()
	p := fake.New(fake.Options{Script: &fake.Script{Responses: responses, WhenExhausted: "error"}})
	r := &rig{fake: p, rec: &recorder{next: p}, usage: &usageLog{}}
	o.Provider, o.Model, o.OnUsage = r.rec, fake.Models()[0], r.usage.record
	r.c = classifier.New(o)
	t.Cleanup(r.c.Close)
	return r
}

// bash is an Input for the bash tool.
func bash(command string) classifier.Input {
	args, _ := json.Marshal(map[string]string{"command": command})
	return classifier.Input{
		Tool: "bash", Args: args, Cwd: "/home/dev/proj", ProjectRoot: "/home/dev/proj",
		LatestUserMessage: "please run the tests",
	}
}

// outcome is the comparable part of a verdict.
type outcome struct{ Allow, Failed, Cached bool }

func outcomeOf(v classifier.Verdict) outcome { return outcome{v.Allow, v.Failed, v.Cached} }
