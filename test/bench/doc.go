// Package bench holds sandscope's scale benchmarks against a real API server
// (internal/testcluster): N BatchSandboxes with their Pods are loaded with the fleet
// simulator, then, in the same run, sandscope's start-up, memory, latencies
// and idle CPU are measured beside kubectl against the same server.
//
//	go test ./test/bench -run '^$' -bench Scale -benchtime 1x -timeout 60m -scale 10000
//
// bench/run.sh runs it at 10,000 and 50,000. CI may run the default small N
// as a smoke; nothing here asserts a time.
//
// BenchmarkChurnRSS (churn_test.go) samples the binary's RSS while a fleet
// churns, on --demo and on a real API server, for -churn-duration.
package bench
