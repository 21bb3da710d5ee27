package memstat

import (
	"os"
	"strconv"
	"testing"
)

func TestProcMB(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc:", err)
	}
	rss := ProcMB("self", "VmRSS")
	if rss <= 0 {
		t.Fatalf("VmRSS of this process: %v MB", rss)
	}
	if byPID := ProcMB(strconv.Itoa(os.Getpid()), "VmHWM"); byPID < rss/2 {
		t.Fatalf("VmHWM by PID %v MB, below half the VmRSS %v MB", byPID, rss)
	}
	for _, c := range []struct{ proc, field string }{{"self", "NoSuchField"}, {"self", "Name"}, {"0", "VmRSS"}} {
		if got := ProcMB(c.proc, c.field); got != -1 {
			t.Errorf("ProcMB(%q, %q) = %v, want -1", c.proc, c.field, got)
		}
	}
}

func TestLiveHeapMB(t *testing.T) {
	before := LiveHeapMB()
	hold := make([]byte, 64<<20)
	for i := range hold {
		hold[i] = 1
	}
	after := LiveHeapMB()
	if after-before < 60 {
		t.Fatalf("live heap %.1f MB, then %.1f MB holding 64 MB more", before, after)
	}
	if hold[len(hold)-1] != 1 {
		t.Fatal("lost the held bytes")
	}
}
