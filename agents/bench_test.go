package agents

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
)

// BenchmarkChildren runs n background children at once, each streaming
// 10,000 one-byte text deltas, and reports the process's peak RSS
// (maxrss-MB; run one size per process to compare sizes:
// go test -run '^$' -bench 'Children/n=4/' ./agents/). The n=1 run with
// 40,000 deltas shows that memory does not grow with the deltas.
func BenchmarkChildren(b *testing.B) {
	for _, c := range []struct{ n, deltas int }{{1, 10000}, {4, 10000}, {1, 40000}} {
		n, deltas := c.n, c.deltas
		b.Run(fmt.Sprintf("n=%d/deltas=%d", n, deltas), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				calls := make([]string, n)
				for j := range calls {
					calls[j] = `{"toolCall":{"name":"task","arguments":{"prompt":"stream","agent":"explore","background":true}}}`
				}
				child := `C:{"steps":[{"text":"` + strings.Repeat("x", deltas) + `","chunkSize":1}],"usage":{"input":10,"output":10000}}`
				responses := []string{`{"steps":[` + strings.Join(calls, ",") + `]}`, `{"text":"idle"}`}
				for j := 0; j < n; j++ {
					responses = append(responses, child)
				}
				r := newBenchRig(b, responses...)
				b.StartTimer()
				r.prompt("fan out")
				for _, task := range r.reg.tasks {
					<-task.done
				}
				b.StopTimer()
				for _, task := range r.reg.tasks {
					if got := len(task.Result().Text); got != deltas {
						b.Fatalf("child text %d bytes", got)
					}
				}
				r.parent.Close()
			}
			var ru syscall.Rusage
			if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
				b.ReportMetric(float64(ru.Maxrss)/1024, "maxrss-MB")
			}
		})
	}
}
