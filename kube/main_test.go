package kube_test

import (
	"flag"
	"testing"

	"github.com/sandscope/sandscope/internal/testcluster"
)

// TestMain runs the package's tests against one real kube-apiserver + etcd.
// Flags are parsed first because the cluster's start-up output depends on -v.
func TestMain(m *testing.M) {
	flag.Parse()
	testcluster.Main(m)
}
