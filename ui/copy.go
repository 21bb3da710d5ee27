package ui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/sandscope/sandscope/internal/textsafe"
)

// CopyRequest is what the copy prompt collects: one path in the sandbox,
// one on this machine, and which way the copy goes.
type CopyRequest struct {
	Download bool   // from the sandbox to this machine
	Remote   string // absolute path in the sandbox
	Local    string
}

// copyEntered is the copy prompt's answer.
type copyEntered struct {
	target pick
	req    CopyRequest
}

// newCopyPrompt asks for a copy to or from target in cp's words, the
// sandbox's side marked by a leading colon: ":/work/out ./out" downloads,
// "./in :/work/in" uploads.
func newCopyPrompt(target pick) *prompt {
	return newWordsPrompt("copy "+textsafe.Line(target.label())+" (:/remote local | local :/remote)> ", func(words []string) (tea.Msg, error) {
		req, err := parseCopyWords(words)
		if err != nil {
			return nil, err
		}
		return copyEntered{target: target, req: req}, nil
	})
}

func parseCopyWords(words []string) (CopyRequest, error) {
	if len(words) != 2 {
		return CopyRequest{}, fmt.Errorf("copy takes two paths, one of them in the sandbox (:/path), got %d", len(words))
	}
	from, to := words[0], words[1]
	fromRemote, toRemote := strings.HasPrefix(from, ":"), strings.HasPrefix(to, ":")
	switch {
	case fromRemote == toRemote:
		return CopyRequest{}, errors.New("mark the one path in the sandbox with a leading colon (:/work/out)")
	case fromRemote:
		return CopyRequest{Download: true, Remote: from[1:], Local: to}, nil
	}
	return CopyRequest{Remote: to[1:], Local: from}, nil
}

// startCopy runs the copy in a tea.Cmd; its outcome goes to the footer and
// :messages.
func (a *App) startCopy(target pick, req CopyRequest) tea.Cmd {
	cp := a.c.backendFor(target.ctx).Copy
	sb, name := target.sb, target.label()
	a.setFlash(fmt.Sprintf("copy %s: checking the Pod…", name), false)
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
		defer cancel()
		summary, err := cp(ctx, sb, req)
		if err != nil {
			return actionDone{err: fmt.Errorf("copy %s: %w", name, err)}
		}
		return actionDone{text: summary}
	}
}
