package approvals_test

import (
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/approvals"
	"github.com/armadra/ama-rpc/internal/secrets"
)

// TestSecretReadThroughVariablesAndGlobs: a secret named in a value the
// command binds (an assignment, an array, a for list) and read later
// through the variable, a glob that matches a credential store the way
// bash matches it (dotfiles only by an explicit dot, or with dotglob), and
// a credential variable of the environment printed by name or by a dump,
// are secret reads: auto's rule tier asks whatever the classifier would
// say (unattended: refused), plan refuses. Everyday spellings stay with the
// static list or the classifier.
func TestSecretReadThroughVariablesAndGlobs(t *testing.T) {
	hit := []string{
		// Variables assigned in the same command.
		`F=~/.ssh/id_rsa; cat < "$F"`,
		`F=$HOME/.aws/credentials; cat "$F"`,
		`F=${HOME}/.aws/credentials; cat "$F"`,
		`F=~/.ssh/id_rsa; cat $F`,
		`F=~/.ssh/id_rsa cat $F`,
		`IFS=: ; F=~/.netrc; cat $F`,
		`for f in ~/.ssh/*; do cat "$f"; done`,
		`for f in ~/.ssh/id_rsa; do cat "$f"; done`,
		`select f in ~/.aws/credentials; do cat "$f"; break; done`,
		`a=(~/.ssh/id_rsa); cat "${a[0]}"`,
		`a=(x ~/.netrc); cat "${a[@]}"`,
		`declare -a a=(~/.ssh/id_rsa); cat "${a[@]}"`,
		`D=~/.ssh; cat $D/*`,
		`F=~/.local/share/ama/auth.json; cat "$F"`,
		// Globs that match a credential store as bash matches them.
		`head -c 9999 ~/.s*/*`,
		`cat ~/.*/*`,
		`cat ~/.a*/c*`,
		`cat ~/.n*`,
		`cd ~ && cat .s*/*`,
		`tail -n +1 ../.s?h/*`,
		`cat ~/.local/share/ama/*/*`,
		`shopt -s dotglob; tail -n +1 ~/*/*`,
		`GLOBIGNORE=x; tail -n +1 ~/*/*`,
		`F=~/.s*; cat $F/*`,
		`for d in ~/.s*; do cat $d/*; done`,
		`read -r F <<< ~/.ssh/id_rsa; cat "$F"`,
		`read -r F <<< "$HOME/.ssh/id_rsa"; cat "$F"`,
		`mapfile -t L <<< ~/.netrc; cat "${L[0]}"`,
		`cat ~/.@(ssh)/*`,
		`cat ~/@(.ssh)/*`,
		// Credential variables of the environment.
		`echo $AWS_SECRET_ACCESS_KEY`,
		`echo "$GITHUB_TOKEN"`,
		`echo ${NPM_TOKEN}`,
		`echo ${NPM_TOKEN:-none}`,
		`printf '%s' "$ANTHROPIC_API_KEY" | base64`,
		`X=$GITHUB_TOKEN; echo $X`,
		`for t in "$NPM_TOKEN"; do echo $t; done`,
		"cat <<EOF\n$GH_TOKEN\nEOF",
		`sh -c 'echo $AWS_SESSION_TOKEN'`,
		`echo $(echo $DATABASE_PASSWORD)`,
		`printenv GITHUB_TOKEN`,
		`printenv`,
		`env`,
		`env | grep PATH`,
		`env -u X`,
		`export -p`,
		`export`,
		`declare -p GITHUB_TOKEN`,
		`declare -x`,
		`set`,
		`python3 -c "import os;print(os.environ['GITHUB_TOKEN'])"`,
		`node -e "console.log(process.env.NPM_TOKEN)"`,
		`ruby -e 'puts ENV["STRIPE_SECRET_KEY"]'`,
		`T=GITHUB_TOKEN; echo ${!T}`,
		`declare -n R=NPM_TOKEN; echo $R`,
		`jq -n '$ENV'`,
		`jq -n 'env | keys'`,
		`python3 -c "import os;print(dict(os.environ))"`,
		`python3 -c "import os;[print(k,v) for k,v in os.environ.items()]"`,
		`node -e "console.log(JSON.stringify(process.env))"`,
		`perl -e 'print "$_=$ENV{$_}\n" for keys %ENV'`,
		`awk 'BEGIN{for(k in ENVIRON) print k, ENVIRON[k]}'`,
		`ruby -e 'p ENV'`,
	}
	stay := []string{
		`cat README.md`,
		`F=README.md; cat "$F"`,
		`for f in src/*.go; do wc -l "$f"; done`,
		`cat src/*.go`,
		`cat ~/notes/*.txt`,
		`tail -n +1 ~/*/*`, // * does not match .ssh without dotglob
		`echo $PATH`,
		`echo $HOME`,
		`echo $SSH_AUTH_SOCK`,
		`echo $AWS_ACCESS_KEY_ID`,
		`echo '$GITHUB_TOKEN'`,
		`echo ${!GITHUB*}`,
		`printenv HOME`,
		`env FOO=1 make test`,
		`export FOO=bar`,
		`set -e`,
		`grep -rn GITHUB_TOKEN src`,
		`git commit -m "$MSG"`,
		`python3 -c "import os;print(os.environ['HOME'])"`,
		`PATH=~/.local/bin:$PATH make`,
		`jq '.name' package.json`,
		`jq -n '$ENV.HOME'`,
		`node -e "console.log(process.env.HOME)"`,
		`python3 -c "import os;print(os.environ.get('HOME'))"`,
		`node app.js --env=prod`,
		`python3 manage.py --env dev`,
		`python3 -c "print('environment')"`,
		`read -r line <<< "hello"`,
		`grep -c x <<< "$VAR"`,
	}
	p := policy(t, approvals.ModeAuto, nil, nil)
	un := *p
	un.Unattended = true
	for _, cmd := range hit {
		v := approvals.Decide(bashCall(cmd), p, nil)
		if v.Decision != approvals.Ask || v.Classify || v.Layer != "auto-rule" {
			t.Errorf("auto %q: %s %s (classify=%v, %s), want the rule tier to ask", cmd, v.Decision, v.Layer, v.Classify, v.Reason)
		}
		if v := approvals.Decide(bashCall(cmd), &un, nil); v.Decision != approvals.Deny {
			t.Errorf("unattended %q: %s, want deny", cmd, v.Decision)
		}
		if v := approvals.Decide(bashCall(cmd), policy(t, approvals.ModePlan, nil, nil), nil); v.Decision == approvals.Allow {
			t.Errorf("plan %q allowed (%s)", cmd, v.Reason)
		}
	}
	for _, cmd := range stay {
		if r := analyze(cmd).RuleTierReason(); r != "" {
			t.Errorf("%q: rule tier %q, want none", cmd, r)
		}
	}
}

// TestGlobMatchReason: bash's matching of a leading dot, the private
// places, and patterns above a store (a walk's business, not a read's).
func TestGlobMatchReason(t *testing.T) {
	private := []string{"/data/ama/sessions"}
	for pat, want := range map[string]bool{
		"/home/u/.s*/*":              true,
		"/home/u/.s*":                true,
		"/home/u/.[s]sh/x":           true,
		"/home/u/.*/credentials":     true,
		"/home/u/.docker/*.json":     true,
		"/home/u/.config/g*/*":       true,
		"/data/ama/s*/x/y":           true,
		"/home/u/*/*":                false, // * does not match a leading dot
		"/home/u/[.]ssh/*":           false, // nor does a bracket
		"/home/u/.c*":                true,  // ~/.claude.json
		"/home/u/.config/*.txt":      false,
		"/home/u/src/*.go":           false,
		"/home/*/notes":              false,
		"/data/ama/*":                true,  // matches the sessions directory itself
		"/data/*":                    false, // above it: a walk's business
		"/home/u/.local/share/ama/*": true,
	} {
		if got := secrets.GlobMatchReason(pat, "/home/u", private, false); (got != "") != want {
			t.Errorf("GlobMatchReason(%q) = %q, want hit=%v", pat, got, want)
		}
	}
	if secrets.GlobMatchReason("/home/u/*/*", "/home/u", nil, true) == "" {
		t.Error("with dotglob, ~/*/* reaches ~/.ssh")
	}
	if r := secrets.GlobMatchReason("/home/u/.s*/*", "/home/u", nil, false); !strings.Contains(r, ".ssh") {
		t.Errorf("reason %q does not name the store", r)
	}
}
