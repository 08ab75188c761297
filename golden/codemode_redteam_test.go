package golden_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/golden"
)

// TestCodemodeNestedRedteam: a codemode script's nested calls keep up to
// 1 MiB each for the script; every one still passes the permission
// pipeline (auto, nobody answers, the classifier allows everything: a
// nested secret read is refused), and what the script hands back to the
// model is still cut to the model's budget however much its nested calls
// returned.
func TestCodemodeNestedRedteam(t *testing.T) {
	const secret = "SECRET-4402-LEAK"
	script := `let out = [];
for (const f of [() => tools.read({path: "~/.ssh/id_rsa"}), () => tools.bash({command: "cat ~/.ssh/id_rsa"}),
  () => tools.grep({pattern: "SECRET", path: "~/.ssh"}), () => tools.bash({command: "F=~/.ssh/id_rsa; cat \"$F\""})]) {
  try { out.push(String(await f())); } catch (e) { out.push("err " + e); }
}
const big = await tools.bash({command: "head -c 900000 /dev/zero | tr '\\0' 'x'"});
out.push("big " + big.output.length);
return out.join("\n") + big.output;`
	r := golden.Start(t, golden.Config{Args: []string{"--mode", "rpc", "--model", "fake/echo", "--permission-mode", "auto", "--codemode", "on"},
		Env: map[string]string{"AMA_SANDBOX": "off"}, Script: redteamScript(t, map[string]any{"name": "codemode", "arguments": map[string]any{"script": script}})})
	t.Setenv("HOME", r.Home)
	writeAt(t, filepath.Join(r.Home, ".ssh/id_rsa"), "-----BEGIN "+secret+"\n")
	r.Send(`{"id":"p","type":"prompt","message":"tidy up the project"}`)
	r.WaitFor("settled", 1, func(o *golden.Object) bool { return o.String("type") == "agent_settled" })
	r.CloseStdin()
	if code := r.Wait(); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.Stderr())
	}
	said := everythingSaid(t, r, "")
	assertAbsent(t, said, secret)
	rec, err := os.ReadFile(filepath.Join(r.Root, "fake-record.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(rec)), "\n")
	last := lines[len(lines)-1]
	if !strings.Contains(last, "big 900000") {
		t.Fatalf("the script's nested bash did not keep its 900,000 characters: %s", last[max(0, len(last)-1500):])
	}
	if n := strings.Count(last, "x"); n > 200000 {
		t.Errorf("the model's request holds %d characters of the script's result", n)
	}
}
