package golden_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/armadra/ama-rpc/golden"
)

// BenchmarkCodemodeReads compares 100 reads made by one codemode script
// with 100 reads the model makes one per reply (100 round trips), through
// the fake model: ns/op is one prompt, "requests" the model requests.
func BenchmarkCodemodeReads(b *testing.B) {
	files := map[string]string{}
	for i := range 100 {
		files[fmt.Sprintf("f%d.txt", i)] = "line\n"
	}
	script := `const r = await Promise.all(Array.from({length: 100}, (_, i) => tools.read({path: "f" + i + ".txt"}))); return r.length`
	oneScript, _ := json.Marshal(map[string]any{"version": 1, "responses": []any{
		map[string]any{"steps": []any{map[string]any{"toolCall": map[string]any{"name": "codemode", "arguments": map[string]string{"script": script}}}}},
		map[string]any{"text": "done"},
	}})
	var direct []any
	for i := range 100 {
		direct = append(direct, map[string]any{"steps": []any{map[string]any{"toolCall": map[string]any{"name": "read", "arguments": map[string]string{"path": fmt.Sprintf("f%d.txt", i)}}}}})
	}
	direct = append(direct, map[string]any{"text": "done"})
	directScript, _ := json.Marshal(map[string]any{"version": 1, "responses": direct})
	for _, c := range []struct {
		name     string
		script   []byte
		requests int
	}{{"codemode", oneScript, 2}, {"direct", directScript, 101}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				r := golden.Start(b, golden.Config{Args: []string{"--model", "fake/echo", "--no-session"}, Script: c.script, Files: files})
				r.WaitFor("session_start", 1, isType("session_start"))
				r.Send(`{"id":"p","type":"prompt","message":"go"}`)
				r.WaitFor("agent_settled", 1, isType("agent_settled"))
				r.CloseStdin()
				r.Wait()
			}
			b.ReportMetric(float64(c.requests), "requests")
		})
	}
}
