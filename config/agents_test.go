package config

import (
	"errors"
	"testing"
)

func TestAgentsSettings(t *testing.T) {
	c, err := Parse("c.json", []byte(`{"agents":{"dirs":["/d"],"sessionBudgetUsd":2.5,"maxConcurrent":5,"claude":{"maxMode":"plan","maxConcurrent":1,"env":{"passthrough":["HTTPS_PROXY"]}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	a := c.Agents
	if len(a.Dirs) != 1 || a.SessionBudgetUsd != 2.5 || a.MaxConcurrent != 5 || a.ByID["claude"].MaxConcurrent != 1 || a.ByID["claude"].MaxMode != "plan" || a.ByID["claude"].Env.Passthrough[0] != "HTTPS_PROXY" {
		t.Fatalf("%+v", a)
	}
	if _, err := Parse("c.json", []byte(`{"agents":{"codex":{"maxModes":"plan"}}}`)); !errors.Is(err, ErrInvalid) {
		t.Fatalf("unknown key: %v", err)
	}
}

func TestSubagentsDefaultModel(t *testing.T) {
	c, err := Parse("c.json", []byte(`{"subagents":{"defaultModel":"a/b"},"agents":{"explore":{"model":"c/d"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Subagents.DefaultModel != "a/b" || c.Agents.ByID["explore"].Model != "c/d" {
		t.Fatalf("%+v %+v", c.Subagents, c.Agents)
	}
}
