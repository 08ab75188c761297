package approvals_test

import (
	"slices"
	"testing"

	"github.com/armadra/ama-rpc/approvals"
)

// hardDenyProbes are the seed-003 hard-deny categories (what users cannot
// undo), each with the stable id it must report. They ask in every mode,
// full-auto included, and are refused unattended.
var hardDenyProbes = []struct{ cmd, id string }{
	// Remote history.
	{"git push --mirror", approvals.DangerGitPushDelete},
	{"git push --mirror origin", approvals.DangerGitPushDelete},
	{"git push origin :main", approvals.DangerGitPushDelete},
	{"git push --delete origin main", approvals.DangerGitPushDelete},
	{"git push -d origin main", approvals.DangerGitPushDelete},
	{"git push --del origin main", approvals.DangerGitPushDelete}, // abbreviation
	{"git push --prune origin", approvals.DangerGitPushDelete},
	{"git push --force origin main", approvals.DangerGitPushForce},
	// Infrastructure teardown.
	{"terraform destroy", approvals.DangerInfraTeardown},
	{"terraform destroy -auto-approve", approvals.DangerInfraTeardown},
	{"terraform -chdir=infra destroy", approvals.DangerInfraTeardown},
	{"terraform apply -destroy -auto-approve", approvals.DangerInfraTeardown},
	{"tofu destroy", approvals.DangerInfraTeardown},
	{"pulumi destroy --yes", approvals.DangerInfraTeardown},
	{"pulumi stack rm prod", approvals.DangerInfraTeardown},
	{"kubectl delete namespace prod", approvals.DangerInfraTeardown},
	{"kubectl -n prod delete deploy api", approvals.DangerInfraTeardown},
	{"kubectl --context prod delete pods --all", approvals.DangerInfraTeardown},
	{"helm uninstall api", approvals.DangerInfraTeardown},
	{"helm -n prod delete api", approvals.DangerInfraTeardown},
	{"aws s3 rm s3://bucket --recursive", approvals.DangerInfraTeardown},
	{"aws --profile prod s3 rm --recursive s3://bucket/", approvals.DangerInfraTeardown},
	{"aws s3 rb s3://bucket --force", approvals.DangerInfraTeardown},
	{"aws ec2 terminate-instances --instance-ids i-1", approvals.DangerInfraTeardown},
	{"aws rds delete-db-instance --db-instance-identifier db", approvals.DangerInfraTeardown},
	{"aws cloudformation delete-stack --stack-name s", approvals.DangerInfraTeardown},
	{"gcloud projects delete my-project", approvals.DangerInfraTeardown},
	{"gcloud compute instances delete vm1 --quiet", approvals.DangerInfraTeardown},
	{"az group delete -n rg --yes", approvals.DangerInfraTeardown},
	{"gsutil rm -r gs://bucket", approvals.DangerInfraTeardown},
	{"gsutil -m rm -r gs://bucket", approvals.DangerInfraTeardown},
	{"gh repo delete owner/repo --yes", approvals.DangerInfraTeardown},
	{"fly apps destroy app", approvals.DangerInfraTeardown},
	{"cdk destroy --force", approvals.DangerInfraTeardown},
	// Database drops.
	{`psql -c "DROP TABLE users"`, approvals.DangerDatabaseDrop},
	{`psql "$DATABASE_URL" -c 'drop database prod'`, approvals.DangerDatabaseDrop},
	{`mysql -e "DROP DATABASE app"`, approvals.DangerDatabaseDrop},
	{`mysql -u root -e 'truncate table orders'`, approvals.DangerDatabaseDrop},
	{`sqlite3 -cmd "DROP TABLE t" app.db`, approvals.DangerDatabaseDrop},
	{`sqlite3 app.db "delete from users;"`, approvals.DangerDatabaseDrop},
	{"redis-cli FLUSHALL", approvals.DangerDatabaseDrop},
	{"redis-cli -h prod flushdb", approvals.DangerDatabaseDrop},
	{`mongosh --eval 'db.dropDatabase()'`, approvals.DangerDatabaseDrop},
	{`mongosh app --eval "db.users.drop()"`, approvals.DangerDatabaseDrop},
	{"psql <<EOF\nDROP SCHEMA public CASCADE;\nEOF", approvals.DangerDatabaseDrop},
	{"dropdb prod", approvals.DangerDatabaseDrop},
	{"mysqladmin -u root drop app", approvals.DangerDatabaseDrop},
	// Disabling security.
	{"setenforce 0", approvals.DangerPlatformSecurity},
	{"ufw disable", approvals.DangerPlatformSecurity},
	{"iptables -F", approvals.DangerPlatformSecurity},
	{"iptables --flush", approvals.DangerPlatformSecurity},
	{"iptables -P INPUT ACCEPT", approvals.DangerPlatformSecurity},
	{"nft flush ruleset", approvals.DangerPlatformSecurity},
	{"sysctl -w kernel.randomize_va_space=0", approvals.DangerPlatformSecurity},
	{"sysctl kernel.yama.ptrace_scope=0", approvals.DangerPlatformSecurity},
	{"systemctl stop apparmor", approvals.DangerPlatformSecurity},
	{"systemctl disable --now firewalld", approvals.DangerPlatformSecurity},
	{"aa-teardown", approvals.DangerPlatformSecurity},
	{"auditctl -e 0", approvals.DangerPlatformSecurity},
	{"csrutil disable", approvals.DangerPlatformSecurity},
	// Containers with the host.
	{"docker run --privileged -v /:/host alpine", approvals.DangerPrivilegedContainer},
	{"docker run --rm -it -v /:/host ubuntu chroot /host", approvals.DangerPrivilegedContainer},
	{"docker run --privileged alpine", approvals.DangerPrivilegedContainer},
	{"docker run -v /var/run/docker.sock:/var/run/docker.sock alpine", approvals.DangerPrivilegedContainer},
	{"docker run --mount type=bind,source=/,target=/host alpine", approvals.DangerPrivilegedContainer},
	{"docker run -v ~:/h alpine", approvals.DangerPrivilegedContainer},
	{"docker run --pid=host alpine", approvals.DangerPrivilegedContainer},
	{"podman run --cap-add=SYS_ADMIN alpine", approvals.DangerPrivilegedContainer},
	{"docker container run --volume=/etc:/e alpine", approvals.DangerPrivilegedContainer},
	// Publishing.
	{"npm publish", approvals.DangerPackagePublish},
	{"cargo publish", approvals.DangerPackagePublish},
	{"cargo publish --allow-dirty", approvals.DangerPackagePublish},
	{"twine upload dist/*", approvals.DangerPackagePublish},
	{"python3 -m twine upload dist/*", approvals.DangerPackagePublish},
	{"poetry publish --build", approvals.DangerPackagePublish},
	{"uv publish", approvals.DangerPackagePublish},
	{"gem push x.gem", approvals.DangerPackagePublish},
	{"gh release create v1.0", approvals.DangerPackagePublish},
	{"gh repo edit --visibility public", approvals.DangerPackagePublish},
	{"mvn deploy", approvals.DangerPackagePublish},
	{"./gradlew publish", approvals.DangerPackagePublish},
	{"dotnet nuget push x.nupkg", approvals.DangerPackagePublish},
	{"vsce publish", approvals.DangerPackagePublish},
	// History destruction.
	{"git reflog expire --expire=now --all && git gc --prune=now", approvals.DangerHistoryDestroy},
	{"git reflog expire --expire-unreachable=now --all", approvals.DangerHistoryDestroy},
	{"git gc --prune=now --aggressive", approvals.DangerHistoryDestroy},
	{"git update-ref -d refs/heads/main", approvals.DangerHistoryDestroy},
	{"git filter-branch --tree-filter 'rm -f x' HEAD", approvals.DangerHistoryDestroy},
	{"git filter-repo --path secrets --invert-paths", approvals.DangerHistoryDestroy},
	{"git prune", approvals.DangerHistoryDestroy},
	{"git stash clear", approvals.DangerHistoryDestroy},
	{"git tag -d v1.0", approvals.DangerHistoryDestroy},
	{"git reset --hard HEAD~3", approvals.DangerGitResetHard},
	// Killing processes.
	{"pkill -9 node", approvals.DangerKillAll},
	{"pkill -KILL -f server", approvals.DangerKillAll},
	{"pkill --signal 9 python", approvals.DangerKillAll},
	{"killall node", approvals.DangerKillAll},
	{"killall -9 python3", approvals.DangerKillAll},
	{"kill -9 -1", approvals.DangerKillAll},
	// Replacing tools on PATH.
	{"cp x ~/.local/bin/ls", approvals.DangerPathHijack},
	{"cp ./git ~/bin/git", approvals.DangerPathHijack},
	{"ln -sf $PWD/fake ~/.local/bin/python3", approvals.DangerPathHijack},
	{"install -m 755 x ~/.cargo/bin/cargo", approvals.DangerPathHijack},
	{"echo 'rm -rf ~' > ~/.local/bin/ls", approvals.DangerPathHijack},
	{"mv tool ~/go/bin/go", approvals.DangerPathHijack},
	{"tee /usr/local/bin/node < x", approvals.DangerSystemWrite},
	// Mining.
	{"xmrig -o pool.example:3333 -u wallet", approvals.DangerMining},
	{"./xmrig --donate-level 1", approvals.DangerMining},
	{"minerd -a sha256d -o stratum+tcp://pool.example:3333", approvals.DangerMining},
	{"./run --url stratum+tcp://pool.example:4444", approvals.DangerMining},
	// Through wrappers and nesting.
	{`bash -c "terraform destroy -auto-approve"`, approvals.DangerInfraTeardown},
	{"env AWS_PROFILE=prod aws s3 rm s3://b --recursive", approvals.DangerInfraTeardown},
	{"timeout 60 kubectl delete ns prod", approvals.DangerInfraTeardown},
	{"echo y | gh repo delete o/r", approvals.DangerInfraTeardown},
}

// TestHardDenyProbes: every probe reports its category id and asks in
// every mode, refused where nobody can be asked.
func TestHardDenyProbes(t *testing.T) {
	for _, p := range hardDenyProbes {
		a := analyze(p.cmd)
		if ids := dangerIDs(a); !slices.Contains(ids, p.id) {
			t.Errorf("%q: dangerous ids %v, want %s", p.cmd, ids, p.id)
		}
		for _, mode := range approvals.Modes {
			pol := policy(t, mode, []string{"bash", "bash(*)"}, nil)
			v := approvals.Decide(bashCall(p.cmd), pol, nil)
			if v.Decision == approvals.Allow {
				t.Errorf("%s %q allowed (%s)", mode, p.cmd, v.Reason)
			}
			if v.Layer != "dangerous" || !slices.Contains(v.Dangerous, p.id) {
				t.Errorf("%s %q: layer %s ids %v, want dangerous %s", mode, p.cmd, v.Layer, v.Dangerous, p.id)
			}
			pol.Unattended = true
			if v := approvals.Decide(bashCall(p.cmd), pol, nil); v.Decision != approvals.Deny {
				t.Errorf("unattended %s %q: %s", mode, p.cmd, v.Decision)
			}
		}
	}
}

// TestHardDenyNeighbours: the ordinary neighbours of the probes stay off
// the dangerous list.
func TestHardDenyNeighbours(t *testing.T) {
	for _, cmd := range []string{
		"git push", "git push origin main", "git push -u origin feature", "git push --tags", "git push --dry-run --delete origin x",
		"terraform plan", "terraform apply", "terraform init", "pulumi preview", "pulumi up",
		"kubectl get pods", "kubectl apply -f k8s.yaml", "kubectl logs api", "kubectl describe pod delete-me",
		"helm install api ./chart", "helm list", "aws s3 ls", "aws s3 cp a s3://b/a", "gcloud compute instances list",
		`psql -c "select 1"`, `psql -c "DELETE FROM users WHERE id = 3"`, `sqlite3 app.db ".tables"`,
		"redis-cli GET key", "mongosh --eval 'db.users.find()'",
		"ufw status", "iptables -L", "sysctl -a", "sysctl net.core.somaxconn", "systemctl status apparmor",
		"docker run --rm alpine echo hi", "docker run -v $PWD:/app node npm test", "docker run -v ./src:/src alpine",
		"docker run -v data:/var/lib/postgresql/data postgres",
		"npm pack", "cargo build", "cargo package", "python3 -m build", "gh pr create", "gh release list",
		"git gc", "git reflog", "git reflog show", "git tag v1.0", "git tag -l", "git update-ref refs/heads/x HEAD",
		"pkill node", "pkill -f vite", "kill 1234", "kill -9 1234",
		"cp x ~/notes/ls", "cp bin/tool ./bin/tool", "go install ./cmd/x",
	} {
		a := analyze(cmd)
		for _, id := range dangerIDs(a) {
			switch id {
			case approvals.DangerGitPushDelete, approvals.DangerInfraTeardown, approvals.DangerDatabaseDrop,
				approvals.DangerPrivilegedContainer, approvals.DangerHistoryDestroy, approvals.DangerPathHijack,
				approvals.DangerMining, approvals.DangerKillAll, approvals.DangerPackagePublish, approvals.DangerPlatformSecurity:
				t.Errorf("%q is on the dangerous list (%s): %v", cmd, id, a.Danger())
			}
		}
	}
}
