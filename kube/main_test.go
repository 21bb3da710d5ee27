package kube_test

import (
	"testing"

	"github.com/sandscope/sandscope/internal/testcluster"
)

// TestMain runs the package's tests against one real kube-apiserver + etcd.
// (testcluster.Main parses the flags first: the start-up output depends on -v.)
func TestMain(m *testing.M) { testcluster.Main(m) }
