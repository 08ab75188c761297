package approvals_test

import (
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/approvals"
)

// Commands whose output is a credential (credcmds.go) are treated like a
// read of a secret path: auto's rule tier asks even with an allow rule for
// bash (unattended: refused), plan and allowlist refuse them, plan.bash
// "ask" asks.
func TestCredentialCommands(t *testing.T) {
	prints := []string{
		// git and its credential helpers
		"git credential fill", "git -c x=y credential fill", "git credential approve", "git credential-store get",
		"git credential-cache get", "git credential-manager get", "git credential-osxkeychain get",
		"git-credential-store get", "git-credential-libsecret get", "/usr/lib/git-core/git-credential-store get",
		"printf 'host=x\\n\\n' | git credential fill",
		// git aliases naming it
		"git -c alias.x='credential fill' x", "git -calias.x='credential fill' x",
		"GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0='credential fill' git x",
		"env GIT_CONFIG_PARAMETERS=\"'alias.x'='credential fill'\" git x",
		"git config alias.tok 'credential fill' && git tok", "git config --global alias.t credential-store",
		"git -c alias.x='!gh auth token' x", "git --no-pager credential fill", "git -C . credential fill",
		// GitHub / GitLab CLIs
		"gh auth token", "command gh auth token", "env gh auth token", "/usr/bin/gh auth token",
		"gh auth token --hostname github.com", "gh auth status -t", "gh auth status --show-token",
		"gh auth status -at", "gh auth status --show-token=true", "gh auth git-credential get", "glab auth status -t",
		"sudo gh auth token", "nice -n 5 gh auth token", "timeout 5 gh auth token",
		// nesting
		"sh -c 'gh auth token'", "bash -c 'gcloud auth print-access-token'", "echo $(gh auth token)",
		"T=$(aws configure get aws_secret_access_key); echo $T", "eval 'pass show x'", "echo get | xargs pass show",
		"sh -c 'sh -c \"git credential fill\"'",
		// clouds
		"aws configure get aws_secret_access_key", "aws configure get aws_access_key_id",
		"aws configure get default.aws_session_token", "aws --profile prod configure get aws_secret_access_key",
		"aws configure export-credentials", "aws configure export-credentials --format env",
		"aws sts get-session-token", "aws sts assume-role --role-arn x --role-session-name y",
		"aws ecr get-login-password", "aws secretsmanager get-secret-value --secret-id x", "aws eks get-token --cluster-name c",
		"aws ssm get-parameter --name x --with-decryption", "aws sso get-role-credentials",
		"kubectl config view --raw", "kubectl --kubeconfig k config view --raw", "kubectl config view --raw=true",
		"kubectl get secret db -o yaml", "kubectl get secrets -o json", "kubectl get secret/db -ojsonpath={.data}",
		"kubectl -n prod get secret db --output=yaml", "kubectl create token default", "oc config view --raw",
		"gcloud auth print-access-token", "gcloud auth print-identity-token", "gcloud --quiet auth print-access-token",
		"gcloud auth application-default print-access-token", "gcloud config config-helper",
		"gcloud secrets versions access latest --secret x", "az account get-access-token",
		"az keyvault secret show --vault-name v -n x", "az acr login -n r --expose-token",
		"doctl auth token", "fly auth token", "flyctl auth token", "heroku auth:token", "heroku config",
		"heroku config:get DATABASE_URL",
		// credential stores and keyrings
		"docker-credential-desktop get", "docker-credential-pass get", "docker-credential-osxkeychain get",
		"op read op://vault/item/field", "op item get foo --fields password", "op inject -i t.tpl", "op run -- env",
		"op document get x", "op signin --raw", "pass show email", "pass email", "pass -c email", "gopass show x",
		"secret-tool lookup service x", "secret-tool search --all service x",
		"security find-generic-password -w -s x", "security find-internet-password -gs x", "security dump-keychain -d",
		"vault read secret/x", "vault kv get secret/x", "vault kv get -field=pw secret/x", "vault token lookup",
		"vault token create", "vault print token", "vault login -method=userpass", "vault unwrap",
		"gpg --export-secret-keys", "gpg --armor --export-secret-keys me", "gpg --export-secret-subkeys",
		"gpg --export-secret-k me", "gpg2 --export-secret-keys", "keyctl print 123", "keyctl read 123",
		"keyctl pipe 123", "kwallet-query -r x kdewallet", "npm config get //registry.npmjs.org/:_authToken",
		"pnpm config get _auth", "yarn config get npmAuthToken",
	}
	allowBash := []string{"bash"}
	for _, cmd := range prints {
		t.Run("prints/"+cmd, func(t *testing.T) {
			r := analyze(cmd).RuleTierReason()
			if !strings.HasPrefix(r, "prints a credential") {
				t.Fatalf("rule tier: %q", r)
			}
			v := approvals.Decide(bashCall(cmd), policy(t, approvals.ModeAuto, allowBash, nil), nil)
			if v.Decision != approvals.Ask || v.Classify || v.Auto == nil || v.Auto.Layer != "rule" {
				t.Fatalf("auto with allow rule: %s classify=%v layer=%s (%s)", v.Decision, v.Classify, v.Layer, v.Reason)
			}
			if analyze(cmd).ReadOnly() {
				t.Fatal("on the read-only list")
			}
			if v := approvals.Decide(bashCall(cmd), policy(t, approvals.ModePlan, allowBash, nil), nil); v.Decision != approvals.Deny &&
				(v.Decision != approvals.Ask || v.Layer != "dangerous") {
				t.Fatalf("plan: %s (%s)", v.Decision, v.Reason)
			}
			pa := policy(t, approvals.ModePlan, nil, nil)
			pa.PlanBash = approvals.PlanBashAsk
			if v := approvals.Decide(bashCall(cmd), pa, nil); v.Decision != approvals.Ask {
				t.Fatalf("plan.bash ask: %s (%s)", v.Decision, v.Reason)
			}
		})
	}
	// Everyday commands of the same programs print no secret.
	everyday := []string{
		"gh pr list", "gh auth status", "gh auth status --hostname github.com", "gh auth login", "gh api user",
		"git config --get user.name", "git config --get credential.helper", "git config alias.st status",
		"git -c color.ui=never log", "git log --grep credential",
		"git show HEAD:credential.go", "git status", "git diff", "aws s3 ls", "aws configure get region",
		"aws configure list", "aws sts get-caller-identity", "aws ssm get-parameter --name x",
		"kubectl get pods", "kubectl get pods -o yaml", "kubectl config view", "kubectl config view --minify",
		"kubectl describe secret db", "kubectl get secrets", "gcloud config list", "gcloud auth list",
		"az account show", "docker ps", "docker-credential-desktop list", "npm whoami", "npm token list",
		"npm config get registry", "pass", "pass ls", "pass find mail", "pass git log", "op item list",
		"op vault list", "secret-tool store --label x a b", "security list-keychains",
		"security find-generic-password -s x", "vault status", "vault kv list secret/", "gpg --list-keys",
		"gpg --export me", "gpg --export-ssh-key me", "gpg --list-secret-keys", "heroku apps", "doctl compute droplet list",
		"keyctl show", "cat README.md", "grep -r token src", "echo gh auth token", "printf '%s' 'git credential fill'",
	}
	for _, cmd := range everyday {
		t.Run("everyday/"+cmd, func(t *testing.T) {
			if r := analyze(cmd).RuleTierReason(); strings.Contains(r, "credential (") {
				t.Fatalf("rule tier: %q", r)
			}
		})
	}
	// Read-only commands stay read-only (plan allows them).
	for _, cmd := range []string{"git log --grep credential", "git status", "cat README.md", "grep -r token src",
		"echo gh auth token"} {
		if !analyze(cmd).ReadOnly() {
			t.Errorf("%s: not read-only", cmd)
		}
	}
}
