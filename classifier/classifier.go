package classifier

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/armadra/ama-rpc/llm"
)

// Mode selects the classifier variant.
type Mode string

// Classifier variants.
const (
	// ModeSingle sends one request and expects {"decision","reason"}
	// (spec 11.1). It is the default.
	ModeSingle Mode = "single"
	// ModeTwoStage sends a one-token fast filter and, when it asks for it, a
	// structured review (spec 11.2).
	ModeTwoStage Mode = "two-stage"
)

// ErrUnknownMode is returned by ParseMode.
var ErrUnknownMode = errors.New("unknown classifier mode")

// ParseMode maps the permission.classifier setting to a Mode; "" is
// ModeSingle.
func ParseMode(s string) (Mode, error) {
	switch Mode(strings.TrimSpace(s)) {
	case "", ModeSingle:
		return ModeSingle, nil
	case ModeTwoStage:
		return ModeTwoStage, nil
	}
	return "", fmt.Errorf("%w %q (want single or two-stage)", ErrUnknownMode, s)
}

// UsageKind is the usage entry kind of every classifier request.
const UsageKind = "permission_classify"

// DefaultTimeout bounds one classification.
const DefaultTimeout = 10 * time.Second

// Output token budgets. The single-stage reply and the detailed review are
// short JSON objects; the fast stage answers one digit but gets room for
// models that reason before answering.
const (
	singleMaxTokens   = 256
	fastMaxTokens     = DefaultFastMaxTokens
	detailedMaxTokens = DefaultDetailedMaxTokens
)

// Options configure a Classifier.
type Options struct {
	// Provider and Model answer the classifier requests: the model of
	// permission.autoModel, or the session model when that is unset. When
	// either is nil every call fails (ask) without a request.
	Provider llm.Provider
	Model    *llm.Model
	// Mode is ModeSingle (the default when empty) or ModeTwoStage. Any other
	// value makes every call fail (ask).
	Mode Mode
	// Timeout bounds a whole classification, all of its requests included
	// (two-stage: both stages and the retry share it). Default
	// DefaultTimeout.
	Timeout time.Duration
	// OnUsage, when set, is called once for every model request made, with
	// kind UsageKind, whether the request succeeded or not, so the session
	// can append a usage entry and count it in its stats. It runs on a
	// classifier goroutine, possibly concurrently with other calls and
	// possibly after the Classify call that caused the request returned (a
	// cancelled or timed-out request still reports what it used). It must
	// not call back into the Classifier.
	OnUsage func(kind string, model *llm.Model, u llm.Usage)
	// Now stamps the requests; default time.Now.
	Now func() time.Time
	// SessionID is passed to the provider as the request's session id. Use
	// a value distinct from the session's own id (for example id +
	// ":classify") so provider-side caching of the main conversation is not
	// disturbed. Optional.
	SessionID string
	// CacheSize bounds the verdict cache; default DefaultCacheSize.
	CacheSize int
	// MaxUserTranscriptTokens and MaxToolTranscriptTokens bound the user
	// messages and the tool-call inputs of the two-stage transcript;
	// default DefaultMaxUserTranscriptTokens / DefaultMaxToolTranscriptTokens,
	// at least MinTranscriptTokens.
	MaxUserTranscriptTokens int
	MaxToolTranscriptTokens int
	// Policy is the two-stage variant's rule lists (nil: DefaultPolicy).
	Policy *Policy
	// FastMaxTokens and DetailedMaxTokens cap the two stages' replies
	// (default 512 and 1200; at least MinFastMaxTokens and
	// MinDetailedMaxTokens); SingleMaxTokens the single variant's (256).
	FastMaxTokens, DetailedMaxTokens, SingleMaxTokens int
	// ReasoningLevel is the thinking level of every classifier request:
	// off (default), minimal, low, medium, high or xhigh. A reasoning
	// model may spend the stage's token limit before it answers, which
	// fails closed: raise the limits with it.
	ReasoningLevel string
}

// Default stage limits of the two-stage variant.
const (
	DefaultFastMaxTokens     = 512
	DefaultDetailedMaxTokens = 1200
)

// Least stage limits (a reply must fit).
const (
	MinFastMaxTokens     = 16
	MinDetailedMaxTokens = 64
)

// ReasoningLevels are the values of Options.ReasoningLevel.
var ReasoningLevels = []string{"off", "minimal", "low", "medium", "high", "xhigh"}

// limit is v when set (at least least), else def.
func limit(v, def, least int) int {
	if v <= 0 {
		return def
	}
	return max(v, least)
}

// budget turns a token budget option into characters.
func budget(tokens, def int) int {
	if tokens == 0 {
		tokens = def
	}
	return max(tokens, MinTranscriptTokens) * charsPerToken
}

// Input is one undecided tool call.
type Input struct {
	// Tool is the tool name and Args its arguments as the model sent them.
	Tool string
	Args json.RawMessage
	// Cwd is the session directory, ProjectRoot the project root.
	Cwd, ProjectRoot string
	// LatestUserMessage is the text of the user's latest message (optional).
	LatestUserMessage string
	// SandboxNote describes an active OS sandbox, e.g. "writes limited to
	// the project and temp; network blocked" (optional).
	SandboxNote string
	// Transcript is the evidence of the two-stage variant: the session's
	// user messages and the inputs of its earlier tool calls, oldest first
	// — never assistant prose or tool results, which may carry injected
	// text. It is cut to the token budgets of Options. The single-stage
	// variant ignores it.
	Transcript []TranscriptEntry

	// budgets of the transcript in characters, set by the Classifier.
	userChars, toolChars int
	system               string // the two-stage system prompt ("": the default)
}

// TranscriptEntry is one user message or one tool call of the transcript.
type TranscriptEntry struct {
	// Tool is the tool name of a tool call; "" marks a user message.
	Tool string
	// Text is the user's text, or the tool call's arguments (JSON).
	Text string
}

// Transcript budgets (pi-automode's maxUserTranscriptTokens and
// maxToolTranscriptTokens): approximate tokens per category, counted as
// four characters each.
const (
	DefaultMaxUserTranscriptTokens = 4000
	DefaultMaxToolTranscriptTokens = 4000
	// MinTranscriptTokens is the smallest budget accepted; smaller values
	// are raised to it.
	MinTranscriptTokens = 32
	charsPerToken       = 4
)

// Verdict is the classifier's answer. It is never a denial: the pipeline
// turns Allow into allow and everything else into ask (deny when nobody can
// be asked).
type Verdict struct {
	// Allow is true only when the model said allow in a valid reply.
	Allow bool
	// Reason is one line of at most MaxReasonChars characters.
	Reason string
	// Cached is set when no model request was made for this call: the
	// verdict came from the cache or from an identical call that was in
	// flight at the same time. Failed verdicts are never cached.
	Cached bool
	// Failed is set when no valid answer was obtained (no model, request
	// error, abort, timeout, truncated or malformed reply); Allow is then
	// false and Reason says what went wrong.
	Failed bool
	// Stage is the stage that decided: StageSingle, or for the two-stage
	// variant StageFast (a routine action) or StageDetailed; "" when no
	// stage answered before a failure.
	Stage Stage
}

// StageSingle names the one request of the single variant.
const StageSingle Stage = "single"

// Classifier is the auto-mode classifier of one session: it holds the
// session's verdict cache and its in-flight requests. It is safe for
// concurrent use.
type Classifier struct {
	o       Options
	timeout time.Duration
	system  string // the two-stage system prompt of Options.Policy ("": default)

	mu      sync.Mutex
	cache   *lru            // successful verdicts
	flights map[key]*flight // requests in progress
	closed  bool
	wg      sync.WaitGroup // flight goroutines
}

// New returns a Classifier for one session.
func New(o Options) *Classifier {
	if o.Mode == "" {
		o.Mode = ModeSingle
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	t := o.Timeout
	if t <= 0 {
		t = DefaultTimeout
	}
	c := &Classifier{o: o, timeout: t, cache: newLRU(o.CacheSize), flights: map[key]*flight{}}
	if o.Policy != nil {
		c.system = o.Policy.systemPrompt()
	}
	return c
}

// A flight is one classification in progress, shared by every caller that
// asks about the same call while it runs.
//
// This is a small singleflight of our own: golang.org/x/sync is not a
// dependency of the module, and its singleflight would not fit anyway. Here
// the work must outlive the caller that started it (it runs under a context
// detached from that caller), must be cancelled once the last waiter has
// gone, and its result must enter the cache under the same lock that removes
// the flight, so that a later caller finds either the flight or the cached
// verdict, never neither.
type flight struct {
	ctx    context.Context // carries the classification deadline
	cancel context.CancelFunc
	done   chan struct{} // closed after res is set
	res    Verdict
	// waiters counts the Classify calls waiting for the flight; guarded by
	// Classifier.mu.
	waiters int
}

// Classify judges one undecided call. It returns within the timeout, or as
// soon as ctx ends, whatever the provider does; any failure is reported as
// {Allow: false, Failed: true}. Successful verdicts (allow and ask) are
// cached per canonical call; identical concurrent calls share one
// classification.
func (c *Classifier) Classify(ctx context.Context, in Input) Verdict {
	if err := ctx.Err(); err != nil {
		return failed("the request was aborted")
	}
	if c.o.Provider == nil || c.o.Model == nil {
		return failed("no classifier model is configured")
	}
	if c.o.Mode != ModeSingle && c.o.Mode != ModeTwoStage {
		return failed(fmt.Sprintf("unknown classifier mode %q", c.o.Mode))
	}
	k := cacheKey(c.o.Mode, in)

	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return failed("the classifier is closed")
	}
	if v, ok := c.cache.get(k); ok {
		c.mu.Unlock()
		v.Cached = true
		return v
	}
	f, joined := c.flights[k], true
	if f == nil || f.ctx.Err() != nil { // none, or past its deadline: start afresh
		f, joined = c.start(ctx, k, in), false
	}
	f.waiters++
	c.mu.Unlock()

	select {
	case <-f.done:
		c.leave(k, f, false)
		return shared(f.res, joined)
	case <-ctx.Done():
		c.leave(k, f, true)
		return failed("the request was aborted")
	case <-f.ctx.Done():
		// The flight closes done before it releases its context, so a
		// finished flight is always seen as finished here.
		select {
		case <-f.done:
			c.leave(k, f, false)
			return shared(f.res, joined)
		default:
		}
		c.leave(k, f, true)
		return failed(c.ctxReason(f.ctx.Err()))
	}
}

// shared returns the flight result as seen by one caller: joiners of a
// successful flight report Cached.
func shared(v Verdict, joined bool) Verdict {
	v.Cached = joined && !v.Failed
	return v
}

// start registers and launches a flight for k. c.mu must be held.
func (c *Classifier) start(ctx context.Context, k key, in Input) *flight {
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.timeout)
	f := &flight{ctx: fctx, cancel: cancel, done: make(chan struct{})}
	c.flights[k] = f
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		v := c.run(fctx, in)
		c.mu.Lock()
		if !v.Failed {
			v.Cached = false
			c.cache.put(k, v)
		}
		if c.flights[k] == f {
			delete(c.flights, k)
		}
		f.res = v
		c.mu.Unlock()
		close(f.done)
		cancel()
	}()
	return f
}

// leave ends one wait for f. When the caller gives up (abandon) and it was
// the last waiter of an unfinished flight, the flight is cancelled and
// forgotten so that a later identical call starts a fresh one.
func (c *Classifier) leave(k key, f *flight, abandon bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f.waiters--
	if !abandon {
		return
	}
	select {
	case <-f.done:
		return
	default:
	}
	if f.waiters == 0 || f.ctx.Err() != nil {
		if c.flights[k] == f {
			delete(c.flights, k)
		}
	}
	if f.waiters == 0 {
		f.cancel()
	}
}

// Close cancels the classifications in progress, waits for their goroutines
// and makes later Classify calls fail. It may be called more than once.
func (c *Classifier) Close() {
	c.mu.Lock()
	c.closed = true
	for _, f := range c.flights {
		f.cancel()
	}
	c.mu.Unlock()
	c.wg.Wait()
}

// reasoning is the thinking level of the requests.
func (c *Classifier) reasoning() string {
	if c.o.ReasoningLevel == "" {
		return "off"
	}
	return c.o.ReasoningLevel
}

// run performs one classification under ctx (which carries the deadline).
func (c *Classifier) run(ctx context.Context, in Input) Verdict {
	if c.o.Mode == ModeTwoStage {
		in.userChars = budget(c.o.MaxUserTranscriptTokens, DefaultMaxUserTranscriptTokens)
		in.toolChars = budget(c.o.MaxToolTranscriptTokens, DefaultMaxToolTranscriptTokens)
		in.system = c.system
		return c.runTwoStage(ctx, in)
	}
	// The model sees the exact action or nothing: an input that does not
	// fit the single-stage view whole is never judged on a cut view.
	if n := utf8.RuneCountInString(sortedJSON(in.Args)); n > MaxInputChars {
		return failed(fmt.Sprintf("%s: %d characters, at most %d can be shown whole", ErrActionTooLarge, n, MaxInputChars))
	}
	system, user := BuildPrompt(in)
	text, err := c.request(ctx, system, []string{user}, limit(c.o.SingleMaxTokens, singleMaxTokens, MinFastMaxTokens))
	if err != nil {
		return failed(err.Error())
	}
	allow, reason, err := ParseReply(text)
	if err != nil {
		return failed(err.Error())
	}
	return Verdict{Allow: allow, Reason: reason, Stage: StageSingle}
}

// failed is a failure verdict with reason detail.
func failed(detail string) Verdict {
	return Verdict{Failed: true, Reason: clipReason("classifier failed: " + detail)}
}

// errTruncated reports a reply that hit its output limit.
var errTruncated = errors.New("the reply was cut off at the output limit")

// ctxReason describes why a classification context ended.
func (c *Classifier) ctxReason(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("timed out after %s", c.timeout)
	}
	return "the request was aborted"
}

// request sends one classifier request and returns the reply text. It fails
// on a provider error, an abort or timeout, a stop reason other than stop
// (errTruncated for length), a tool call, or a reply without text. Usage is
// reported whatever the outcome.
func (c *Classifier) request(ctx context.Context, system string, msgs []string, maxTokens int) (string, error) {
	if m := c.o.Model.MaxTokens; m > 0 && m < maxTokens {
		maxTokens = m
	}
	ts := c.o.Now().UnixMilli()
	req := &llm.Request{
		Model: c.o.Model, System: system, MaxTokens: maxTokens, ThinkingLevel: c.reasoning(),
		Purpose: llm.PurposeClassify, SessionID: c.o.SessionID, Timestamp: ts,
	}
	for _, m := range msgs {
		req.Messages = append(req.Messages, llm.NewUser(m, ts, ""))
	}
	msg, err := c.o.Provider.Stream(ctx, req, func(llm.StreamEvent, *llm.AssistantMessage) {})
	if msg != nil && c.o.OnUsage != nil {
		c.o.OnUsage(UsageKind, c.o.Model, msg.Usage)
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return "", errors.New(c.ctxReason(ctxErr))
	}
	if err != nil {
		if llm.KindOf(err) == llm.ErrAborted {
			return "", errors.New("the request was aborted")
		}
		return "", fmt.Errorf("request error: %w", err)
	}
	if msg == nil {
		return "", errors.New("the provider returned no reply")
	}
	if len(msg.ToolCalls()) > 0 {
		return "", errors.New("the reply contains a tool call")
	}
	switch msg.StopReason {
	case llm.StopStop:
	case llm.StopLength:
		return "", errTruncated
	default:
		return "", fmt.Errorf("the reply ended with stop reason %q", msg.StopReason)
	}
	text := msg.Text("")
	if strings.TrimSpace(text) == "" {
		return "", errors.New("the reply is empty")
	}
	return text, nil
}
