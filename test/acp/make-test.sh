#!/bin/sh
# Runs the ACP end-to-end test for `make test` and says what happened in
# one line: its ok line, "SKIP test/acp: <reason>" when it skipped (go
# test's package summary would print ok), or the whole output on failure.
# AMA_ACP_FLAGS: make test's race flags, so that the package's
# dependencies are the race pass's compiles.
GO=${GO:-go}
out=$($GO test ${AMA_ACP_FLAGS:--race -vet=all} -count=1 -v ./test/acp 2>&1)
rc=$?
if [ $rc -ne 0 ]; then
	printf '%s\n' "$out"
	exit $rc
fi
if printf '%s\n' "$out" | grep -q '^--- SKIP'; then
	reason=$(printf '%s\n' "$out" | sed -n 's/^ *e2e_test\.go:[0-9]*: //p' | head -n 1)
	echo "SKIP	test/acp: $reason"
else
	printf '%s\n' "$out" | grep '^ok'
fi
