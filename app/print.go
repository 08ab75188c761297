package app

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/internal/i18n"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/printmode"
	"github.com/armadra/ama-rpc/session"
)

// runPrint is -p: the prompt is read (stdin included) before anything is
// built, then the startup session is wired unattended (wire: policy,
// sub-agents, budgets) and handed to printmode.
//
// lang (earlyLang) is the language of what is said before the wiring
// read the profile and the project config; the run's own lines use the
// wired language.
func runPrint(ctx context.Context, env Env, flags *Flags, log *zap.Logger, lang i18n.Lang) int {
	prompt, err := printmode.ReadPrompt(printmode.PromptInput{Words: flags.Prompt, Stdin: env.Stdin, NoStdin: flags.NoStdin,
		Getenv: env.Getenv, Stderr: env.Stderr, Ctx: ctx, Lang: lang, Lead: flags.From != ""})
	if code, ok := SignalExit(ctx); ok {
		return code // Ctrl+C while waiting for stdin
	}
	if errors.Is(err, printmode.ErrNoPrompt) {
		fmt.Fprintf(env.Stderr, "ama: %s\n", i18n.T(lang, i18n.PrintNoPrompt))
		return ExitUsage
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "ama: %v\n", err)
		return ExitRuntime
	}
	wenv := env
	wenv.Stdin = strings.NewReader("") // read already: a host's startup must not watch it
	w, err := wire(ctx, wenv, flags, log)
	if err != nil {
		fmt.Fprintf(env.Stderr, "ama: %v\n", err)
		return exitCodeFor(err)
	}
	st, _ := w.first.State()
	never := func() { bounded(ctx, func() { w.mgr.Close(w.first, "exit") }, w.log) } // never started: no SessionEnd
	var images []*llm.ImageContent
	if from := w.from; from != nil { // --from: its text first, then the words and stdin
		prompt = printmode.JoinPrompt(from.text, prompt)
		if prompt == "" {
			fmt.Fprintf(env.Stderr, "ama: %s\n", i18n.T(w.lang, i18n.PrintNoPrompt))
			never()
			return ExitUsage
		}
	}
	if paths := printmode.ImagePaths(flags.Images, flags.Prompt); len(paths) > 0 || (w.from != nil && len(w.from.images) > 0) {
		var model *llm.Model
		if st.Model != nil {
			model, _, _ = w.deps.Models.Find(st.Model.Provider, st.Model.ID)
		}
		if images, err = printmode.LoadImages(paths, st.Cwd, model); err == nil && w.from != nil && len(w.from.images) > 0 {
			if err = printmode.AcceptsImages(model); err == nil {
				images = append(images, w.from.images...) // after --image, as ama adds them to that list
			}
		}
		if err != nil {
			fmt.Fprintf(env.Stderr, "ama: %v\n", err)
			never()
			return ExitUsage
		}
	}
	// A host's ui.notify is human text: stderr, never stdout. The startup
	// hook_executed lines belong to rpc's stream, not to -p's.
	w.early.open(func(e events.Event) bool {
		if n, ok := e.(events.Notification); ok {
			fmt.Fprintf(env.Stderr, "ama: [host] %s\n", n.Message)
		}
		return true
	})
	if err := startup(w); errors.Is(err, session.ErrStartBlocked) {
		fmt.Fprintf(env.Stderr, "ama: %v\n", err)
		bounded(ctx, w.mgr.Exit, w.log) // the normal exit order, then exit 6
		return ExitHook
	} else if err != nil {
		return startupFailed(ctx, env, w, err)
	}
	cfg := printmode.Config{Session: w.first, StartReason: w.reason, Format: flags.OutputFormat, Prompt: prompt, Images: images, Preset: w.preset,
		Stdout: env.Stdout, Stderr: env.Stderr, Log: log, Signal: SignalExit, Lang: w.lang}
	if env.Hooks != nil {
		cfg.Writer, cfg.Now = env.Hooks.Writer, env.Hooks.Now
	}
	code := printmode.Run(ctx, cfg)
	bounded(ctx, w.mgr.Exit, w.log)
	return code
}
