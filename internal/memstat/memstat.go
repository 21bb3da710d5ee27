// Package memstat reads memory figures of this and other processes (the
// live heap, and Linux's /proc/PID/status), for what the benchmarks and
// memory tests report.
package memstat

import (
	"os"
	"runtime"
	"strconv"
	"strings"
)

// LiveHeapMB is this process's live heap after a collection, in MB of
// 1024 kB. The second collection frees what the first one's finalizers
// let go.
func LiveHeapMB() float64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / (1 << 20)
}

// ProcMB is a memory field ("VmRSS", "VmHWM", "RssAnon", "RssFile") of
// /proc/PROC/status, PROC being "self" or a process ID, in MB of 1024 kB;
// -1 where it cannot be read (no /proc, no such process or field).
func ProcMB(proc, field string) float64 {
	data, err := os.ReadFile("/proc/" + proc + "/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == field+":" {
			kb, err := strconv.Atoi(f[1])
			if err != nil {
				return -1
			}
			return float64(kb) / 1024
		}
	}
	return -1
}
