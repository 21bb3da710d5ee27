// Package bench holds sandscope's scale benchmarks against a real API server
// (internal/testcluster): N BatchSandboxes with their Pods are loaded with the fleet
// simulator, then, in the same run, sandscope's start-up, memory, latencies
// and idle CPU are measured beside kubectl against the same server.
//
//	go test ./test/bench -run '^$' -bench '^BenchmarkScale$' -benchtime 1x -timeout 60m -scale 10000
//
// test/bench/run.sh runs it at 10,000 and 50,000. BenchmarkNetScale measures
// the start-up again through a shaped link (a network namespace, tbf and a
// delaying relay; root only):
//
//	SANDSCOPE_BENCH_NET=40ms:50mbit,40ms:10mbit test/bench/run.sh 10000
//
// BenchmarkChurnRSS (churn_test.go) samples the binary's RSS while a fleet
// churns, on --demo and on a real API server, for -churn-duration.
//
// CI may run the default small N as a smoke; nothing here asserts a time.
package bench
