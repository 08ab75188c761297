package approvals_test

import (
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/approvals"
)

// Auto mode's rule tier (section 4): hits ask, even with allow rules.
func TestAutoRuleTier(t *testing.T) {
	ask := []string{
		// network (4.1)
		"curl https://x", "wget x", "ssh host", "scp a host:b", "sftp host", "rsync a host:b", "nc host 1", "ncat h 1",
		"netcat h 1", "telnet h", "ftp h", "socat - tcp:h:1", "aria2c x", "http GET x", "https x", "gh pr list",
		"npx cowsay", "bunx x", "pnpx x", "git push", "git pull", "git fetch", "git clone x", "git ls-remote",
		"git submodule update --init", "git remote update", "git -C sub fetch", "npm install", "npm i x", "pnpm add x",
		"yarn add x", "bun add x", "npm ci", "npm update", "pnpm up", "yarn upgrade", "npm publish --dry-run", "pnpm dlx x",
		"npm create vite", "npm login", "npm adduser", "yarn", "python -m pip install x", "python3 -m pip download x",
		"pip install x", "pip3 download x", "pipx install x", "pipx run x", "poetry install", "poetry add x",
		"poetry update", "uv add x", "uv sync", "uv pip install x", "cargo install x", "cargo publish", "cargo update",
		"cargo add x", "go get x", "go install x@latest", "go mod download", "gem install x", "gem push x",
		"brew install x", "brew upgrade", "brew update", "brew tap x", "apt install x", "apt-get update",
		"apt upgrade", "yum install x", "dnf update", "apk add x", "apk update", "pacman -S x", "pacman -Syu",
		"docker pull x", "docker push x", "docker login", "podman pull x",
		// deletion (4.2)
		"rm -r build", "rm -R build", "rm -f x", "rm -rf build", "rm --recursive build", "rm --force x",
		"find . -name x -delete", "shred x", "truncate -s 0 x", "srm x", "git clean -n", "git clean -fd",
		"git restore x", "git checkout -- x", "git checkout .", "git checkout -f main", "git checkout --force main",
		"git stash drop", "git stash clear",
		// write targets (4.3)
		"echo x > /tmp/out", "echo x >> ../out", "echo x &> /tmp/o", "echo x >| /tmp/o", "ls 2> /tmp/err",
		"echo x | tee /tmp/o", "mv a /tmp/", "mkdir /tmp/x", "touch ../x", "rmdir /tmp/x", "unlink /tmp/x",
		"cp a /tmp/b", "cp -t /tmp a b", "ln -s a /tmp/b", "install a /usr/local/bin/a", "chmod +x /tmp/run",
		"chown me /tmp/x", "echo x > .git/hooks/pre-commit", "cp a sub/.git/config", "echo x > .ama/config.json",
		"echo {} > .claude/settings.json", "cp evil.json .mcp.json", "mkdir -p .gemini && echo x > .gemini/settings.json",
		"echo x > .env", "touch ~/.ssh/config", "echo x > $OUT", "cd .. && echo x > y", "cd $D && touch x",
		"cd /tmp; touch x", "sort -o /tmp/x y", "dd of=/tmp/x", "sed -i s/a/b/ /tmp/x",
		// secret arguments (4.4)
		"cat .env", "cat .env.local", "grep x prod.env", "cat ~/.ssh/id_rsa", "cat id_ed25519", "cat cert.pem",
		"cat server.key", "cat ~/.aws/credentials", "cat ~/.netrc", "cat .git-credentials", "cat ~/.kube/config",
		"cat ~/.docker/config.json", "cat ~/.config/gcloud/x.json", "cat ~/.config/ama/auth.json", "cat .env*",
		"cat id_*", "ls ~/.ssh/*", "wc -l < .env", "grep --file=.env x", "cat .pgpass", "cat keystore.jks",
	}
	for _, cmd := range ask {
		t.Run("ask/"+cmd, func(t *testing.T) {
			if r := analyze(cmd).RuleTierReason(); r == "" {
				t.Fatal("rule tier did not hit")
			}
			p := policy(t, approvals.ModeAuto, []string{"bash"}, nil)
			v := approvals.Decide(bashCall(cmd), p, nil)
			if v.Decision == approvals.Allow || v.Classify {
				t.Fatalf("got %s classify=%v (%s)", v.Decision, v.Classify, v.Reason)
			}
			if v.Auto == nil || v.Auto.Layer != "rule" {
				t.Fatalf("auto %+v", v.Auto)
			}
		})
	}
	pass := []string{
		"git status", "npm test", "pnpm run build", "go test ./...", "docker ps", "cargo build", "git remote -v",
		"rm file.txt", "git checkout main", "git stash", "git stash list", "echo x > out.txt", "echo x > /dev/null",
		"ls 2>/dev/null", "echo x >/dev/stderr", "cat .env.example", "cat .env.sample", "cat .env.template",
		"cat .env.dist", "cat .envrc", "cat id_rsa.pub", "cat keys/id_ed25519.pub", "cp a b", "mkdir -p src/x", "touch src/a.ts",
		"cd src && echo x > y", "sort -o out.txt in.txt", "cat .e*", "git commit -m 'update .env handling'",
		"curl_like_tool x", "node x.js",
	}
	for _, cmd := range pass {
		t.Run("pass/"+cmd, func(t *testing.T) {
			if r := analyze(cmd).RuleTierReason(); r != "" {
				t.Fatalf("rule tier hit: %s", r)
			}
		})
	}
}

// Write targets are resolved lexically for previews.
func TestWriteAndDeleteTargets(t *testing.T) {
	cases := []struct {
		cmd           string
		write, delete []string
	}{
		{"echo x > out.txt", []string{cwd + "/out.txt"}, nil},
		{"echo x >> ~/log", []string{home + "/log"}, nil},
		{"echo x &> a; echo y >| b", []string{cwd + "/a", cwd + "/b"}, nil},
		{"ls >&/etc/passwd", []string{"/etc/passwd"}, nil},
		{"ls 2>&1 >&- 3>&2", nil, nil},
		{"ls > /dev/null 2>/dev/stderr", nil, nil},
		{"cat a | tee -a b c", []string{cwd + "/b", cwd + "/c"}, nil},
		{"mv a b", []string{cwd + "/a", cwd + "/b"}, nil},
		{"cp -r a b dir/", []string{cwd + "/dir"}, nil},
		{"cp -t /tmp a b", []string{"/tmp"}, nil},
		{"cp --target-directory=/tmp a", []string{"/tmp"}, nil},
		{"ln -sf a b", []string{cwd + "/b"}, nil},
		{"install -m 755 a /usr/local/bin/a", []string{"/usr/local/bin/a"}, nil},
		{"rsync -a src/ host:dst", nil, nil},
		{"rsync -a src/ /backup/", []string{"/backup"}, nil},
		{"mkdir -p -m 755 a/b", []string{cwd + "/a/b"}, nil},
		{"touch -d now x", []string{cwd + "/x"}, nil},
		{"chmod -R 755 a b", []string{cwd + "/a", cwd + "/b"}, nil},
		{"chmod -w f", []string{cwd + "/f"}, nil},
		{"chown --reference=r a", []string{cwd + "/a"}, nil},
		{"rm -rf build dist", []string{cwd + "/build", cwd + "/dist"}, []string{cwd + "/build", cwd + "/dist"}},
		{"rmdir x", []string{cwd + "/x"}, []string{cwd + "/x"}},
		{"find /tmp/x -name y -delete", nil, []string{"/tmp/x"}},
		{"dd if=a of=b", []string{cwd + "/b"}, nil},
		{"sed -i 's/a/b/' f g", []string{cwd + "/f", cwd + "/g"}, nil},
		{"sed -e s/a/b/ -i f", []string{cwd + "/f"}, nil},
		{"sed s/a/b/ f", nil, nil},
		{"curl -o page.html https://x", []string{cwd + "/page.html"}, nil},
		{"wget -O f https://x", []string{cwd + "/f"}, nil},
		{"cd /tmp && echo x > y", []string{"/tmp/y"}, nil},
		{"cd && echo x > y", []string{home + "/y"}, nil},
		{"(cd /tmp); echo x > y", []string{cwd + "/y"}, nil},
		{"cd /tmp > out.txt", []string{cwd + "/out.txt"}, nil},
		{"env -C /tmp touch x", []string{"/tmp/x"}, nil},
		{"echo x > $HOME//./a", []string{home + "/a"}, nil},
		{`echo x > "$PWD/a"`, []string{cwd + "/a"}, nil},
		{"echo x > ~/../../etc/x", []string{"/etc/x"}, nil},
		{"/usr/bin/time -o t.txt ls", []string{cwd + "/t.txt"}, nil},
		{"git diff --output=d.patch", []string{cwd + "/d.patch"}, nil},
		{"shred -u secret", []string{cwd + "/secret"}, []string{cwd + "/secret"}},
	}
	for _, c := range cases {
		t.Run(c.cmd, func(t *testing.T) {
			a := analyze(c.cmd)
			if a.Err != nil {
				t.Fatal(a.Err)
			}
			if got := a.WriteTargets(); strings.Join(got, ",") != strings.Join(c.write, ",") {
				t.Fatalf("writes %q, want %q", got, c.write)
			}
			if got := a.DeleteTargets(); strings.Join(got, ",") != strings.Join(c.delete, ",") {
				t.Fatalf("deletes %q, want %q", got, c.delete)
			}
		})
	}
	// Run-time targets are reported as dynamic.
	a := analyze("echo x > $OUT")
	if len(a.Writes) != 1 || !a.Writes[0].Dynamic || len(a.WriteTargets()) != 0 {
		t.Fatalf("dynamic target: %+v", a.Writes)
	}
}
