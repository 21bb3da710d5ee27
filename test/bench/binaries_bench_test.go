package bench

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sandscope/sandscope/internal/tmuxtest"
)

var (
	cmpBinaries = flag.String("binaries", "", "BenchmarkGeneratorBinaries: sandscope binaries to compare, comma-separated")
	cmpRounds   = flag.Int("rounds", 2, "BenchmarkGeneratorBinaries: how many times each binary runs, in turn with the others")
	cmpProfiles = flag.String("profiles", "", "BenchmarkGeneratorBinaries: a directory for each run's CPU profile (default: a temporary one)")
)

// BenchmarkGeneratorBinaries runs several sandscope binaries (a build
// before a change and one after) in turn against one load generator of
// -scale sandboxes, each -rounds times: on a shared machine a before/after
// comparison means anything only when both ran in the same conditions, and
// the generator's start at 150,000 takes minutes. Each run prints the
// binary's CPU and RSS once the synced table shows all N, its RSS 3 s later
// (after the load's garbage went back to the OS), peak RSS, the collector's
// share of its CPU profile, and the load average at its start.
//
//	go build -o /tmp/before . && (change) && go build -o /tmp/after .
//	go test ./test/bench -run '^$' -bench '^BenchmarkGeneratorBinaries$' -benchtime 1x -timeout 80m \
//	  -scale 150000 -binaries /tmp/before,/tmp/after -rounds 3
func BenchmarkGeneratorBinaries(b *testing.B) {
	if *cmpBinaries == "" {
		b.Skip("no -binaries to compare")
	}
	if err := tmuxtest.Available(); err != nil {
		b.Skip(err)
	}
	n := *scale
	g, kubeconfig := startGenerator(b, genOptions(n))
	profiles := *cmpProfiles
	if profiles == "" {
		profiles = b.TempDir()
	}
	synced := regexp.MustCompile(fmt.Sprintf(`(?s)synced.*\b%s sandboxes\b`, countPattern(n)))
	for round := range *cmpRounds {
		for i, bin := range strings.Split(*cmpBinaries, ",") {
			prof := filepath.Join(profiles, fmt.Sprintf("%d-%s-%d.cpu.prof", i, filepath.Base(bin), round))
			load := loadAvg()
			start := time.Now()
			s := tmuxtest.Start(b, tmuxtest.Options{Width: 200, Height: 50, Env: []string{"SANDSCOPE_CPUPROFILE=" + prof}},
				bin, "--kubeconfig", kubeconfig, "-n", g.Namespace())
			s.WaitForRegexp(synced, 40*time.Minute)
			wall := time.Since(start)
			pid := s.PID()
			proc := strconv.Itoa(pid)
			cpu, rss, anon := procCPU(pid), procMemory(proc, "VmRSS"), procMemory(proc, "RssAnon")
			time.Sleep(3 * time.Second)
			rssLater, peak := procMemory(proc, "VmRSS"), procMemory(proc, "VmHWM")
			quitBinary(b, s)
			share, err := gcShare(prof)
			if err != nil {
				share = err.Error()
			}
			fmt.Printf("%s round %d: synced in %s, CPU %s, RSS %s (anonymous %s), 3 s later %s, peak %s; GC %s; load average %s\n",
				bin, round, ms(wall), ms(cpu), rss, anon, rssLater, peak, share, load)
			_ = os.Stdout.Sync()
		}
	}
}
