package web

import (
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkMemory5000 is the checker's memory with 5,000 groups after an
// hour of cycles at 5 s (every group's chart history full): the
// controller, the policy's state and the status page, fed by an observer of
// our own (the AWS clients' share does not grow with groups). It reports
// the live heap after a collection and the process's resident set
// (VmRSS, Linux), in MB. The target is an RSS of at most 250 MB.
// CHECKER_BENCH_GROUPS sets another number of groups.
func BenchmarkMemory5000(b *testing.B) {
	groups := 5000
	if s := os.Getenv("CHECKER_BENCH_GROUPS"); s != "" {
		groups, _ = strconv.Atoi(s)
	}
	for b.Loop() {
		c, now := manyController(b, groups, benchCycles, 5*time.Second)
		if rec := get(b, newTestHandler(c, now), "/"); rec.Code != http.StatusOK {
			b.Fatal(rec.Code)
		}
		runtime.GC()
		debug.FreeOSMemory()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "heap-MB")
		if rss, ok := residentMB(); ok {
			b.ReportMetric(rss, "rss-MB")
		}
		runtime.KeepAlive(c)
	}
}

// residentMB reads VmRSS from /proc/self/status.
func residentMB() (float64, bool) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) >= 1 {
				kb, err := strconv.ParseFloat(f[0], 64)
				return kb / 1024, err == nil
			}
		}
	}
	return 0, false
}
