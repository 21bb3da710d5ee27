package procstatus

import (
	"os"
	"strconv"
	"testing"
)

func TestMB(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc:", err)
	}
	rss := MB("self", "VmRSS")
	if rss <= 0 {
		t.Fatalf("VmRSS of this process: %v MB", rss)
	}
	if byPID := MB(strconv.Itoa(os.Getpid()), "VmHWM"); byPID < rss/2 {
		t.Fatalf("VmHWM by PID %v MB, below half the VmRSS %v MB", byPID, rss)
	}
	for _, c := range []struct{ proc, field string }{{"self", "NoSuchField"}, {"self", "Name"}, {"0", "VmRSS"}} {
		if got := MB(c.proc, c.field); got != -1 {
			t.Errorf("MB(%q, %q) = %v, want -1", c.proc, c.field, got)
		}
	}
}
