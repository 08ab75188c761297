# ama-rpc: build, test and measure.
GO  ?= go
BIN ?= bin/ama-rpc

.PHONY: build test vet fuzz bench bench-sandbox bench-peer golden clean acp-deps

build:
	$(GO) build -o $(BIN) ./cmd/ama-rpc
	# The small sandbox launcher, found next to ama-rpc (sandbox/runtime.go).
	$(GO) build -trimpath -ldflags='-s -w' -o $(dir $(BIN))ama-rpc-sandbox ./cmd/ama-rpc-sandbox

# The test command of the README and of .ci/run, in three steps, each
# keeping both cores busy (go test runs two packages at a time):
# 1. One build of the real binary, shared by the packages that drive it
#    (golden, printmode, test/robust, test/acp) through AMA_TEST_BIN, and
#    of the small sandbox launcher next to it, which the sandbox tests
#    start per command as production does, and of the test MCP server
#    (mcpclient, test/robust, test/acp: test/testbin.Tool; each linked
#    its own, 1.5-2 CPU-s a link); run alone, they build their own.
# 2. The race pass: every package but test/acp. go vet runs inside it:
#    -vet=all is every analyzer of go vet ./..., packages without tests
#    included, on the compiles the pass makes anyway (a go vet ./... of its
#    own compiled everything once more without -race: 110 CPU-s on a fresh
#    clone). The packages whose tests take longest come first (SLOW): go
#    test starts them in the order named, and one started last ends the run.
# 3. Without -race, as one go test: the huge-prompt memory tests (MEMTESTS:
#    they measure a child built without it, and the race runtime's own
#    memory would count against codemode's cap) and the tests of code that
#    runs on one goroutine (PROPTESTS: property tests at their full counts,
#    generated inputs against a reference, pathological inputs, the spill's
#    memory, rpc/schema's inference and document checks, the approvals
#    analyser's big tables: analyse and Decide on fixed commands, 16 s of
#    the package's race run and 4 s without): the race detector
#    costs them 4-10x and finds nothing; the concurrent parts of those
#    packages keep their tests in the race pass (a name must be unique in
#    the tree: it is skipped in the race pass of every package). Their packages'
#    dependencies are step 1's compiles. Beside it, the ACP end-to-end test
#    (with -race), through make-test.sh so that a skip says SKIP and why;
#    its one line comes last. The memory peaks are the same beside other
#    work (test/robust's mem_test.go); not beside the race pass.
# GORACE=atexit_sleep_ms=0: a -race process sleeps 1 s at exit by default.
# Races are reported when they happen and still fail the run; only a
# goroutine still running after the tests ended loses that second.
# -ldflags=-w links without DWARF (debugger data; stack traces and race
# reports come from the runtime's own tables): a third of the CPU of
# linking some 60 test binaries per run. The race pass's compiles need
# none either (-dwarf=false: 7-9% of their CPU). The compiles without -race
# keep go build's defaults: the tests' own go builds (mcpserver, the
# sandbox's go corpus) find them in the cache.
MEMTESTS = ^Test(ACP)?Memory(Of|Cap)
PROPTESTS = ^(TestDifferentialGrepGlobRead|TestDifferentialReadScanBound|TestDifferentialSessions|FuzzDifferentialSessions|FuzzAnalyzeShell|TestProjectionMatchesReference|TestTreeDeepChain|TestPathologicalInputs|TestPayloadGrammar|TestShellStdinEvasions|TestSpillMovesHugeEntries|TestFastPathMatchesReference|TestFastPathTakesCommonChunks|TestDriftedEntryTypeFails|TestDriftedTypeFails|TestDriftedCommandTypeFails|TestGoldensValidate|TestBreakingGenerated|TestSchemaSnapshot|TestDangerousList|TestMatrix|TestWrappersRunDangerousCommands|TestHardDenyProbes|TestOversizedCommand|TestAskRules|TestSafeListOptionGrammar|TestEvasionsAreDangerous|TestDangerousAbbreviations)$$
PROPPKGS = ./store ./approvals ./tools ./llm/openai ./rpc/schema
SLOW = ./golden ./sandbox ./test/robust ./rpc/acp ./store ./llm/openai ./app ./session ./approvals ./tools ./agents ./codemode ./printmode
RACE = -race -vet=all -gcflags=all=-dwarf=false -ldflags=-w
TESTBIN = $(abspath bin/test/ama-rpc)
ACPOUT = $(dir $(TESTBIN))acp.out
test: export AMA_TEST_BIN = $(TESTBIN)
test: export AMA_ACP_FLAGS = $(RACE)
test: export GORACE = atexit_sleep_ms=0
test:
	$(GO) build -ldflags=-w -o $(dir $(TESTBIN)) ./cmd/ama-rpc ./cmd/ama-rpc-sandbox
	$(GO) build -ldflags=-w -o $(dir $(TESTBIN))mcpserver ./test/mcpserver/cmd
	$(GO) test $(RACE) -count=1 -timeout 30m -skip '$(MEMTESTS)|$(PROPTESTS)' $(SLOW) $$($(GO) list ./... | grep -v '/test/acp$$')
	GO=$(GO) test/acp/make-test.sh >$(ACPOUT) 2>&1 & acp=$$!; \
	$(GO) test -vet=off -ldflags=-w -count=1 -timeout 30m -run '$(MEMTESTS)|$(PROPTESTS)' ./test/robust $(PROPPKGS) ./codemode; \
	rc=$$?; wait $$acp || rc=1; cat $(ACPOUT); exit $$rc

# go vet here and for the other platforms ama-rpc builds on (README,
# Platforms): a file that uses a Linux-only call without a build tag fails
# here rather than on a user's Mac. Not part of make test: the three other
# platforms compile the tree again (about 3 CPU-minutes from a cold cache).
vet:
	$(GO) vet ./...
	GOOS=darwin GOARCH=arm64 $(GO) vet ./...
	GOOS=linux GOARCH=arm64 $(GO) vet ./...
	GOOS=linux GOARCH=386 $(GO) vet ./...

# Short fuzzing passes over the parsers (longer: FUZZTIME=5m make fuzz).
FUZZTIME ?= 20s
fuzz:
	$(GO) test ./internal/stdio -run '^$$' -fuzz FuzzLineReader -fuzztime $(FUZZTIME)
	$(GO) test ./rpc -run '^$$' -fuzz FuzzAppendJSONString -fuzztime $(FUZZTIME)
	$(GO) test ./rpc -run '^$$' -fuzz FuzzParseCommand -fuzztime $(FUZZTIME)
	$(GO) test ./internal/jsonobj -run '^$$' -fuzz FuzzMembers -fuzztime $(FUZZTIME)
	$(GO) test ./internal/jsonobj -run '^$$' -fuzz FuzzElements -fuzztime $(FUZZTIME)
	$(GO) test ./internal/jsonobj -run '^$$' -fuzz '^FuzzScanner$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/utf8cut -run '^$$' -fuzz FuzzHeadTail -fuzztime $(FUZZTIME)
	$(GO) test ./internal/stdio -run '^$$' -fuzz FuzzValidUTF8 -fuzztime $(FUZZTIME)
	$(GO) test ./internal/jsonstr -run '^$$' -fuzz FuzzAppendUnquoted -fuzztime $(FUZZTIME)
	$(GO) test ./internal/jsonlit -run '^$$' -fuzz FuzzLift -fuzztime $(FUZZTIME)
	$(GO) test ./printmode -run '^$$' -fuzz FuzzReadPrompt -fuzztime $(FUZZTIME)
	$(GO) test ./codemode -run '^$$' -fuzz FuzzOptions -fuzztime $(FUZZTIME)
	$(GO) test ./codemode -run '^$$' -fuzz FuzzScript -fuzztime $(FUZZTIME)
	$(GO) test ./rpc/acp -run '^$$' -fuzz FuzzStream -fuzztime $(FUZZTIME)
	$(GO) test ./rpc/acp -run '^$$' -fuzz FuzzUnescapeHTML -fuzztime $(FUZZTIME)
	$(GO) test ./rpc/acp -run '^$$' -fuzz FuzzChunkLine -fuzztime $(FUZZTIME)
	$(GO) test ./rpc/acp -run '^$$' -fuzz FuzzIDRoundTrip -fuzztime $(FUZZTIME)
	$(GO) test ./approvals -run '^$$' -fuzz '^FuzzAnalyzeShell$$' -fuzztime $(FUZZTIME)
	$(GO) test ./approvals -run '^$$' -fuzz '^FuzzDecideBash$$' -fuzztime $(FUZZTIME)
	$(GO) test ./approvals -run '^$$' -fuzz '^FuzzPayloadEmbedding$$' -fuzztime $(FUZZTIME)
	$(GO) test ./store -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME)
	$(GO) test ./store -run '^$$' -fuzz '^FuzzDifferentialSessions$$' -fuzztime $(FUZZTIME)
	$(GO) test ./store -run '^$$' -fuzz '^FuzzLearnOrigin$$' -fuzztime $(FUZZTIME)
	$(GO) test ./store -run '^$$' -fuzz '^FuzzMessageFacts$$' -fuzztime $(FUZZTIME)
	$(GO) test ./trace -run '^$$' -fuzz '^FuzzReadStep$$' -fuzztime $(FUZZTIME)
	$(GO) test ./tools -run '^$$' -fuzz FuzzToolPaths -fuzztime $(FUZZTIME)
	$(GO) test ./tools -run '^$$' -fuzz FuzzArgSchema -fuzztime $(FUZZTIME)
	$(GO) test ./llm/openai -run '^$$' -fuzz '^FuzzParseFast$$' -fuzztime $(FUZZTIME)
	$(GO) test ./llm/openai -run '^$$' -fuzz '^FuzzStream$$' -fuzztime $(FUZZTIME)

# The ACP TypeScript SDK for the end-to-end test of --mode acp (skipped
# by make test when missing; .ci/run installs it).
acp-deps:
	npm ci --prefix test/acp --no-audit --no-fund

# Micro benchmarks, then end-to-end numbers against the built binary.
# The session package's command benchmarks (Rewind, GetTrace, GetTree,
# Fork) run at 1k and 100k entries; AMA_BENCH_1M=1 adds 1M (minutes:
# every iteration resumes a 400 MB session first). Fork's row meters its
# floor in the same iterations and prints it beside it: writing the same
# bytes durably under a new name (create, write, fsync the file and its
# directory: floor-cpu-ms/op, x-floor), each metered with nothing of the
# harness inside; store's BenchmarkCreateFork is the same pair for
# store.Create alone.
bench: build
	$(GO) test -run '^$$' -bench . -benchmem ./rpc ./store ./approvals ./checkpoint ./llm/openai ./host ./telemetry ./hooks ./session ./agents ./tools
	$(GO) run ./test/bench -bin $(BIN)
	$(GO) test -run '^$$' -bench ChunkLine -benchmem ./rpc/acp
	$(GO) run ./test/bench -bin $(BIN) -acp 100000
	# ACP session/new with the session file made durable, next to
	# --no-session (store's BenchmarkCreateSteps, above, splits it up).
	$(GO) run ./test/bench -bin $(BIN) -acpnew 60
	# HTTP stream: the OpenAI adapter vs curl on the bench mock's 100k-delta
	# reply, same run (skips without ../shared/bench/mock_openai.py).
	$(GO) run ./test/bench/httpstream -deltas 100000
	# What the bash sandbox costs a call: the rows of bench-sandbox, then
	# end to end, sessions of 30 bash calls of `true` through the binary
	# with the sandbox on vs off and time to hello on vs off, idle and
	# with 16 busy loops.
	AMA_BENCH_LOAD=16 AMA_SANDBOX_LAUNCHER=$(abspath $(BIN)) $(GO) test -run '^$$' -bench 'StartTrue|Wrap|SelfTest' -benchtime 50x ./sandbox
	$(GO) run ./test/bench -bin $(BIN) -sandbox 30 -load 16
	# grep, glob and read side by side with rg, GNU grep, fd and wc -l on Go's src.
	test/bench/tools-deps.sh
	$(GO) run ./test/bench/tools

# The sandbox's per-call cost alone (the first sandbox line of make
# bench): 50 starts of `true` each bare, through the session's pre-started
# launcher (jail-launcher, what bash calls use), Landlock-only, in a jail
# per call through ama-rpc-sandbox and through ama-rpc, and in bare
# namespaces (the kernel's floor); every row the median wall and the
# median CPU of a call, all of it: the caller's, the launcher's (its
# process CPU clock during the call) and the command's. loaded-16 runs
# bare and jail-launcher paired per round beside 16 busy loops it starts
# (AMA_BENCH_LOAD; median ratios). Then the parent's ruleset build (Wrap)
# and the canary self-test.
bench-sandbox: build
	AMA_BENCH_LOAD=16 AMA_SANDBOX_LAUNCHER=$(abspath $(BIN)) $(GO) test -run '^$$' -bench 'StartTrue|Wrap|SelfTest' -benchtime 50x ./sandbox

# Rewrite the golden transcripts under test/fixtures (review the diff!).
golden:
	UPDATE_GOLDEN=1 $(GO) test ./golden/

clean:
	rm -rf bin

# ama-rpc versus pi's RPC mode on the same loopback mock server.
bench-peer:
	test/bench/peer.sh
