package ui

import (
	"strings"
	"testing"

	"github.com/sandscope/sandscope/model"
)

// y (or Y) confirms; every other key, even ctrl+c or alt+y, cancels; either
// answer closes the question. The answer keys lead the line, so that a
// narrow terminal keeps them.
func TestConfirmYesOnlyOnY(t *testing.T) {
	target := pick{sb: &model.Sandbox{Key: "bsbx/team-rl/sbx-a", Meta: &model.ObjectMeta{Namespace: "team-rl", Name: "sbx-a"}}, ctx: "prod"}
	for _, k := range []string{"y", "Y"} {
		if outs, done := press(t, newDeleteConfirm(target, false), k); !done || last(outs) != (deleteConfirmed{target, false}) {
			t.Errorf("%s: %v (closed %v), want the delete confirmed", k, outs, done)
		}
	}
	for _, k := range []string{"n", "N", "esc", "enter", "j", "ctrl+c", "alt+y"} {
		if outs, done := press(t, newDeleteConfirm(target, false), k); !done || last(outs) != (confirmCancelled{"delete"}) {
			t.Errorf("%s: %v (closed %v), want the delete cancelled", k, outs, done)
		}
	}
	if outs, _ := press(t, newStopForwardConfirm("127.0.0.1:8080"), "y"); last(outs) != (stopForwardConfirmed{"127.0.0.1:8080"}) {
		t.Errorf("stop forward, y: %v", outs)
	}
	if outs, _ := press(t, newStopForwardConfirm("127.0.0.1:8080"), "n"); last(outs) != (confirmCancelled{"stop"}) {
		t.Errorf("stop forward, n: %v", outs)
	}
	if v := newDeleteConfirm(target, false).view(testShared(), 30); !strings.HasPrefix(v, "[y/N] Delete bsbx team-rl/sbx") {
		t.Errorf("the question at 30 columns: %q", v)
	}
}
