package approvals_test

import "testing"

// TestEnvDumpEvasionAsksInAuto: ways to print a credential variable of the
// environment that auto's rule tier missed: an indirect reference whose
// name is only known at run time, ps's BSD e option, a key=value operand
// naming /proc/PID/environ, and interpreter code using the whole
// environment under other spellings. Everyday neighbours do not ask.
func TestEnvDumpEvasionAsksInAuto(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		asks bool
	}{
		{`for v in ${!GITHUB*}; do echo "${!v}"; done`, true},
		{`for v in $(compgen -e); do echo "$v=${!v}"; done`, true},
		{`echo "${!v:-none}"`, true},
		{`X=${!v}; echo $X`, true},
		{`ps eww`, true},
		{`ps auxe`, true},
		{`ps e -p $$`, true},
		{`dd if=/proc/self/environ`, true},
		{`dd if=/proc/1/task/1/environ of=out.txt`, true},
		{`python3 -c 'import os; print(os.environb)'`, true},
		{`python3 -c "print(__import__('os').environ)"`, true},
		{`ruby -e 'puts ENV.values'`, true},
		{`ruby -e 'p ENV.inspect'`, true},
		{`deno eval 'console.log(Deno.env.toObject())'`, true},
		{`bun -e 'console.log(Bun.env)'`, true},
		{`php -r 'print_r(getenv());'`, true},
		// must not hit
		{`echo "${!GITHUB@}"`, false}, // names only
		{`echo "${!arr[@]}"`, false},  // an array's keys
		{`ps aux`, false},
		{`ps -ef`, false},
		{`ps -e -o pid,comm`, false},
		{`ps axjf`, false},
		{`dd if=a.txt of=b.txt`, false},
		{`python3 -c 'import os; print(os.environ.get("HOME"))'`, false},
		{`php -r 'echo getenv("HOME");'`, false},
		{`ruby -e 'puts ENV["HOME"]'`, false},
	} {
		if got := analyze(tc.cmd).RuleTierReason(); (got != "") != tc.asks {
			t.Errorf("%q: rule tier %q, want asks=%v", tc.cmd, got, tc.asks)
		}
	}
}
