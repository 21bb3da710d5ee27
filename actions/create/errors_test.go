package create_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/sandscope/sandscope/actions/create"
	"github.com/sandscope/sandscope/actions/refusal"
	"github.com/sandscope/sandscope/kube"
)

// `create -o json` prints {"error":{...}}: the shared refusal.Error's fields in
// their order, no evidence, then how far the create got.
func TestErrorJSON(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	failed := &create.Error{
		Stage: create.StagePullingImage, Sandbox: "id", Namespace: "ns",
		Cleanup: &create.Cleanup{Deleted: true, Terminating: []string{"p"}, Detail: "gone"},
		Stages:  []create.StageRecord{{Stage: create.StageQueued, At: at, Detail: "d"}},
	}
	failed.Code, failed.Message, failed.RetryReason, failed.Executed = create.CodeImagePull, "pull", "pulling", refusal.ExecutedUnknown
	for _, tc := range []struct {
		err  error
		want string
	}{
		{failed, `{"error":{"code":"IMAGE_PULL_FAILED","message":"pull","retryable":false,"retryReason":"pulling","executed":"unknown","stage":"PullingImage","sandbox":"id","namespace":"ns","cleanup":{"deleted":true,"terminatingPods":["p"],"detail":"gone"},"stages":[{"stage":"Queued","at":"2026-01-02T03:04:05Z","detail":"d"}]}}`},
		{create.Refuse(refusal.CodeReadOnly, "ro", false), `{"error":{"code":"READ_ONLY","message":"ro","retryable":false,"executed":"no"}}`},
		{create.ConnectionError(errors.New("no route")), `{"error":{"code":"CONNECTION","message":"no route","retryable":true,"executed":"no"}}`},
		// No kubeconfig, or credentials refused: no retry changes that.
		{create.ConnectionError(&kube.ConnectError{Reason: "no cluster configured", Local: true}), `{"error":{"code":"CONNECTION","message":"no cluster configured","retryable":false,"executed":"no"}}`},
		{create.ConnectionError(&kube.ConnectError{Reason: "credentials refused", Denied: true}), `{"error":{"code":"CONNECTION","message":"credentials refused","retryable":false,"executed":"no"}}`},
	} {
		b, err := json.Marshal(map[string]any{"error": tc.err})
		if err != nil || string(b) != tc.want {
			t.Errorf("got  %s (%v)\nwant %s", b, err, tc.want)
		}
	}
	const text = "IMAGE_PULL_FAILED: pull [sandbox ns/id, last stage PullingImage]; gone (retryable: false: pulling; executed: unknown)"
	if failed.Error() != text {
		t.Errorf("text %q, want %q", failed.Error(), text)
	}
}

// A create's error is found as itself and as the shared refusal.Error, and
// says whether anything was created.
func TestErrorIsARefusalError(t *testing.T) {
	err := create.Usage("bad flag")
	var ce *create.Error
	var r *refusal.Error
	if !errors.As(err, &ce) || !errors.As(err, &r) || r.Code != refusal.CodeUsage || r.Executed != refusal.ExecutedNo {
		t.Fatalf("%v: create error %v, refusal %v", err, ce, r)
	}
	if ce.Created() {
		t.Errorf("a usage error claims something was created")
	}
	if ce = (&create.Error{Sandbox: "id"}); !ce.Created() {
		t.Errorf("an error naming a sandbox claims nothing was created")
	}
}

// A success is a nil error, not a nil *Error dressed as a non-nil error.
func TestResolveSuccessIsNilError(t *testing.T) {
	_, _, err := (&create.Creator{}).Resolve(context.Background(), create.Request{Namespace: "ns", Image: "busybox", Entrypoint: []string{"sleep", "1d"}})
	if err != nil {
		t.Fatalf("Resolve of an explicit start command: %v (%T)", err, err)
	}
}
