package sweep_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/model"
)

// EnvScaleTest runs the fleet-scale tests (minutes of writes to the test
// API server): SANDSCOPE_SCALE_TEST=1 go test ./actions/sweep -run Scale -timeout 60m.
// A number above 1 is the fleet's size instead of 10,000 (the same share dead).
const EnvScaleTest = "SANDSCOPE_SCALE_TEST"

const (
	scaleSandboxes = 10000
	scaleDeadShare = 0.1515 // 1,515 of 10,000
	scaleTakenEach = 5      // every 5th dead sandbox's IP is held by a Pod of another namespace
)

// TestScaleSweepOneNamespaceIPTakenElsewhere: 10,000 sandboxes in one
// namespace, 1,515 of them dead, 303 of whose IPs Pods of another
// namespace hold now. `sweep -n` and `get -n` must name every one of them
// IP_TAKEN within the default timeout, and no slot may be left unchecked:
// one lookup per dead sandbox ran out of time here and printed POD_DEAD.
func TestScaleSweepOneNamespaceIPTakenElsewhere(t *testing.T) {
	env := os.Getenv(EnvScaleTest)
	if testing.Short() || env == "" {
		t.Skipf("fleet-scale test: set %s=1 (and -timeout 60m)", EnvScaleTest)
	}
	scaleSandboxes := scaleSandboxes
	if n, err := strconv.Atoi(env); err == nil && n > 1 {
		scaleSandboxes = n
	}
	scaleDead := int(float64(scaleSandboxes) * scaleDeadShare)
	c := testcluster.Get(t)
	ns, other := c.Namespace(t), c.Namespace(t)
	ctx := context.Background()
	start := time.Now()
	if err := testcluster.Parallel(ctx, scaleSandboxes, 16, func(i int) error {
		return c.CreateFleetSandbox(ctx, ns, testcluster.FleetSandbox{Name: fmt.Sprintf("sbx-%05d", i), IP: scaleIP(i), Dead: i < scaleDead})
	}); err != nil {
		t.Fatal(err)
	}
	taken := 0
	// A Running Pod of namespace other at every scaleTakenEach-th dead sandbox's IP.
	if err := testcluster.Parallel(ctx, scaleDead, 16, func(i int) error {
		if i%scaleTakenEach != 0 {
			return nil
		}
		_, err := c.CreateRunningPod(ctx, other, testcluster.SandboxPod(fmt.Sprintf("thief-%05d", i), ""), scaleIP(i), false)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < scaleDead; i += scaleTakenEach {
		taken++
	}
	t.Logf("created %d sandboxes (%d dead) and %d thieves in %s", scaleSandboxes, scaleDead, taken, time.Since(start).Round(time.Second))

	began := time.Now()
	out, errOut, code := runCLI("sweep", "--kubeconfig", c.Kubeconfig, "-n", ns, "-o", "json")
	t.Logf("sweep -n: exit %d in %s", code, time.Since(began).Round(time.Millisecond))
	rep := decodeReport(t, out)
	if got := len(findings(rep.Findings, model.CodeIPTaken)); got != taken {
		t.Errorf("sweep -n: %d IP_TAKEN, want %d (stderr %q)", got, taken, errOut)
	}
	dead := findings(rep.Findings, model.CodePodDead)
	if len(dead) != scaleDead-taken {
		t.Errorf("sweep -n: %d POD_DEAD, want %d", len(dead), scaleDead-taken)
	}
	for _, f := range dead {
		if strings.Contains(f.Message, "not checked") {
			t.Errorf("sweep -n: an unchecked POD_DEAD: %s", f.Message)
			break
		}
	}
	if len(rep.Contexts) != 1 || rep.Contexts[0].Partial {
		t.Errorf("sweep -n: contexts %+v; want one, read fully", rep.Contexts)
	}

	began = time.Now()
	out, errOut, code = runCLI("get", "sb", "--kubeconfig", c.Kubeconfig, "-n", ns, "--no-headers")
	t.Logf("get -n: exit %d in %s", code, time.Since(began).Round(time.Millisecond))
	if n := strings.Count(out, "IP_TAKEN→thief-"); n != taken || strings.Contains(out, "(unchecked)") || code != 0 {
		t.Errorf("get -n: exit %d, %d IP_TAKEN rows (want %d), unchecked rows %d; stderr %q",
			code, n, taken, strings.Count(out, "(unchecked)"), errOut)
	}
}

func scaleIP(i int) string { return fmt.Sprintf("10.%d.%d.%d", 200+(i>>16&31), i>>8&255, i&255) }
