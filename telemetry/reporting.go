package telemetry

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/armadra/ama-rpc/llm"
)

// Reporting states of an endpoint.
const (
	Unknown  = "unknown"
	Reported = "reported"
	Silent   = "silent"
)

// Defaults of the catalog.
const (
	DefaultMinTokens = 1024
	DefaultTTL       = 600 * time.Second // miss attribution without a catalog TTL
	silentStreak     = 3
)

// Purposes of recorded requests beyond llm's.
const PurposeWarm = "warm"

// Fingerprint identifies the cacheable prefix of a request.
type Fingerprint struct {
	System, Tools, Model string
}

// FingerprintOf hashes the system prompt and the tool table (sorted by
// name) to 16 hex digits each; model is provider/id[@channel] verbatim.
func FingerprintOf(system string, tools []llm.ToolDecl, model string) Fingerprint {
	sorted := append([]llm.ToolDecl(nil), tools...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	b, _ := json.Marshal(sorted)
	return Fingerprint{System: hash16([]byte(strings.TrimSpace(system))), Tools: hash16(b), Model: model}
}

func hash16(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:8])
}

// Record is one completed model request.
type Record struct {
	At       time.Time // when the request was sent
	Purpose  string
	Endpoint string
	Print    Fingerprint
	Usage    llm.Usage
	// NoCacheField: the raw response had no cache field at all.
	NoCacheField bool
}

// PromptTokens is input + cacheRead + cacheWrite.
func (r *Record) PromptTokens() int { return r.Usage.Input + r.Usage.CacheRead + r.Usage.CacheWrite }

func (r *Record) cacheTouched() bool { return r.Usage.CacheRead+r.Usage.CacheWrite > 0 }

// EndpointKey is provider|baseUrl host|model id[@channel].
func EndpointKey(provider, baseURL, modelID, channel string) string {
	host := baseURL
	if u, err := url.Parse(baseURL); err == nil && u.Host != "" {
		host = u.Host
	}
	k := provider + "|" + host + "|" + modelID
	if channel != "" {
		k += "@" + channel
	}
	return k
}

// Reporting is the process-wide table of endpoint reporting states,
// shared by every session (in memory only).
type Reporting struct {
	mu sync.Mutex
	m  map[string]*endpoint
}

type endpoint struct {
	state   string
	streak  int
	last    *Record
	gcd     int
	samples int
}

// NewReporting returns an empty table.
func NewReporting() *Reporting { return &Reporting{m: map[string]*endpoint{}} }

// Process is the table of this process.
var Process = NewReporting()

// Observe updates the endpoint of r.
func (t *Reporting) Observe(r Record, minTokens int, ttl time.Duration) {
	if minTokens <= 0 {
		minTokens = DefaultMinTokens
	}
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.m[r.Endpoint]
	if e == nil {
		e = &endpoint{state: Unknown}
		t.m[r.Endpoint] = e
	}
	if read := r.Usage.CacheRead; read > 0 {
		e.gcd = gcd(e.gcd, read)
		e.samples++
	}
	switch {
	case r.cacheTouched():
		e.state, e.streak = Reported, 0
	case e.state != Reported && r.PromptTokens() >= minTokens:
		p := e.last
		comparable := p != nil && p.PromptTokens() >= minTokens && p.Print == r.Print && r.At.Sub(p.At) < ttl
		if r.NoCacheField || comparable {
			e.streak++
			if e.streak >= silentStreak {
				e.state = Silent
			}
		}
	}
	rc := r
	e.last = &rc
}

// State returns the state of an endpoint; override is compat.cacheReporting
// ("silent", "reported"; "" or "auto" = inferred).
func (t *Reporting) State(key, override string) string {
	if override == Silent || override == Reported {
		return override
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if e := t.m[key]; e != nil {
		return e.state
	}
	return Unknown
}

// Granularity is the inferred cache-read block size of an endpoint (0:
// unknown): the GCD of its cache reads, with at least two samples, within
// 128..8192.
func (t *Reporting) Granularity(key string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.m[key]
	if e == nil || e.samples < 2 || e.gcd < 128 || e.gcd > 8192 {
		return 0
	}
	return e.gcd
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
