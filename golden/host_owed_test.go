package golden_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/armadra/ama-rpc/golden"
)

// At the end of input a host's request answered later is one of the
// server's owed replies (host.SetOwed): the messages.sendUser that its
// agent_settled handler sends while the server settles is answered, and
// the run it started ends on its own (not aborted by the exit) with its
// lines on stdout.
func TestHostDeferredReplyAfterEOF(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "trace")
	adapter := writeAdapter(t, "owed.cjs", `const fs = require("fs");
module.exports = {hostApi: 1, create(api) {
  let asked = false;
  api.events.on("agent_settled", () => {
    if (asked) return;
    asked = true;
    const note = (s) => fs.appendFileSync(process.env.OWED_TRACE, s + "\n");
    api.messages.sendUser("again").then((d) => note("reply " + d), (e) => note("error " + e.message));
  });
  return {id: "owed"};
}};`)
	r := golden.Start(t, golden.Config{
		Args: []string{"--model", "fake/echo", "--host", adapter},
		Env:  map[string]string{"OWED_TRACE": trace},
		// The host's run takes a while: an exit that does not wait for it
		// aborts it.
		Script: []byte(`{"version":1,"responses":[{"text":"first"},{"text":"second","delayMs":300}]}`),
	})
	r.WaitFor("hello", 1, isType("hello"))
	r.Send(`{"id":"p","type":"prompt","message":"hi"}`)
	r.CloseStdin()
	if code := r.Wait(); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.Stderr())
	}
	ends := eventsOf(r, "agent_end")
	if len(ends) != 2 || ends[0]["stopReason"] != "stop" || ends[1]["stopReason"] != "stop" {
		t.Errorf("agent_end of the prompt and of the host's run, both stopped normally: %v", ends)
	}
	if data, _ := os.ReadFile(trace); string(data) != "reply started\n" {
		t.Errorf("the host's sendUser reply: %q", data)
	}
}
