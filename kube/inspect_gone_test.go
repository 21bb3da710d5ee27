package kube_test

import (
	"strings"
	"testing"

	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/kube"
)

// y on a deleted sandbox whose Pod stays (the stuck-Terminating pile-up)
// shows the Pod, saying the sandbox object is gone, instead of failing.
func TestInspectorYAMLOfADeletedSandbox(t *testing.T) {
	c, ns, in, sb := inspectFixture(t)
	c.Controller(t).Delete(kube.BatchSandboxGVR, ns, "sbx-i")
	out, err := in.YAML(testcluster.Context(t), sb)
	if err != nil {
		t.Fatalf("YAML of a deleted sandbox: %v", err)
	}
	for _, want := range []string{"batchsandboxes " + ns + "/sbx-i: not found (the sandbox object is gone", "kind: Pod", "name: sbx-i-0"} {
		if !strings.Contains(out, want) {
			t.Errorf("YAML lacks %q:\n%s", want, out)
		}
	}
}
