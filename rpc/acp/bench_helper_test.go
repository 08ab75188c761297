package acp

import "github.com/armadra/ama-rpc/session"

// promptInputOf is what handlePrompt makes of decoded params.
func promptInputOf(p *promptParams) (session.PromptInput, error) {
	return promptInput(p.Prompt, p.lifted)
}
