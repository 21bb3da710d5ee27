package model

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/model/modeltest"
)

// BenchmarkSlimPod: the informer transform's cost per Pod.
func BenchmarkSlimPod(b *testing.B) {
	p := modeltest.FleetPod(1)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_ = SlimPod(p)
	}
}

// BenchmarkBatchSandboxConvert: the BatchSandbox transform's cost.
func BenchmarkBatchSandboxConvert(b *testing.B) {
	u := modeltest.UnstructuredBatchSandbox("x", map[string]string{osv1.AnnotationEndpoints: `["10.0.0.1"]`})
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_ = BatchSandboxFromUnstructured(u)
	}
}

var _ = unstructured.Unstructured{}
