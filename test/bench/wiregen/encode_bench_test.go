package wiregen

import (
	"testing"

	"github.com/sandscope/sandscope/demo/sim"
)

// BenchmarkEncode is the generator's own cost per sandbox: building and
// encoding its Pod (protobuf watch frame) and BatchSandbox (JSON event).
//
//	go test ./test/bench/wiregen -run '^$' -bench Encode -benchmem
func BenchmarkEncode(b *testing.B) {
	s, err := Start(Options{Load: sim.LoadOptions{N: 150000, Seed: 1}})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	pods, sandboxes := podStream{s}, batchSandboxStream{s}
	bytes := 0
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		bytes += len(pods.added(i % 150000))
		bytes += len(sandboxes.added(i % 150000))
	}
	b.ReportMetric(float64(bytes)/float64(b.N), "B/sandbox")
}
