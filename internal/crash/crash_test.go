package crash

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// A panic that client-go's HandleCrash sees (an informer handler's) runs the
// restorers, then the report with its stack, then exit(70).
func TestHandleCrashRestoresThenReports(t *testing.T) {
	var out bytes.Buffer
	var order []string
	code := -1
	defer Install(&out, func(c int) { code = c; order = append(order, "exit") })()
	defer OnPanic(func() { order = append(order, "restore:"+itoa(out.Len())) })()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer func() { _ = recover() }() // the exit above did not exit: HandleCrash panics on
		defer utilruntime.HandleCrash()
		panic("handler broke")
	}()
	wg.Wait()
	if code != ExitCode || strings.Join(order, ",") != "restore:0,exit" {
		t.Fatalf("code %d, order %v", code, order)
	}
	if s := out.String(); !strings.HasPrefix(s, "sandscope: internal error: handler broke\n") || !strings.Contains(s, "crash_test.go") {
		t.Fatalf("report:\n%s", s)
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	return "n"
}
