package classifier_test

import (
	"context"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/classifier"
)

// The configured policy lists, stage limits and reasoning level reach the
// requests; unset, the defaults stay (thinking off, 512/1200 tokens, the
// built-in lists); a limit below the least one is raised to it.
func TestConfiguredRequests(t *testing.T) {
	pol, err := classifier.ExpandPolicy([]string{"Trusted host: ci.example.com"}, nil, nil, []string{"$defaults", "never touch the billing service"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name                 string
		o                    classifier.Options
		thinking             string
		fast, detailed       int
		wantText, absentText string
	}{
		{"defaults", classifier.Options{Mode: classifier.ModeTwoStage}, "off", 512, 1200, "Hard deny", "Trusted host"},
		{"configured", classifier.Options{Mode: classifier.ModeTwoStage, Policy: &pol, ReasoningLevel: "low", FastMaxTokens: 2048, DetailedMaxTokens: 4096},
			"low", 2048, 4096, "never touch the billing service", ""},
		{"least limits", classifier.Options{Mode: classifier.ModeTwoStage, FastMaxTokens: 1, DetailedMaxTokens: 2}, "off", 16, 64, "Hard deny", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, tc.o, say("1"), say(`{"decision":"allow","tier":"allow","reason":"tests"}`))
			if v := r.c.Classify(context.Background(), bash("go test ./...")); !v.Allow {
				t.Fatalf("verdict %+v", v)
			}
			reqs := r.rec.requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests", len(reqs))
			}
			for i, want := range []int{tc.fast, tc.detailed} {
				if reqs[i].ThinkingLevel != tc.thinking || reqs[i].MaxTokens != want {
					t.Errorf("request %d: thinking %q max %d, want %q %d", i, reqs[i].ThinkingLevel, reqs[i].MaxTokens, tc.thinking, want)
				}
				if !strings.Contains(reqs[i].System, tc.wantText) || (tc.absentText != "" && strings.Contains(reqs[i].System, tc.absentText)) {
					t.Errorf("request %d system prompt lacks %q or has %q", i, tc.wantText, tc.absentText)
				}
			}
		})
	}
}
