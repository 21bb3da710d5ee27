package kube

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sandscope/sandscope/kube/codec"
	"github.com/sandscope/sandscope/model"
)

// LivePod reads a Pod straight from the API server, never from an informer
// cache, within the request timeout. Identity-checked actions (exec) call it
// just before they act: a cached Pod may lag a same-name re-creation or an IP
// change by the cache's delay, and the incident showed that acting on a stale
// identity runs a command in a stranger's container.
//
// An empty ResourceVersion makes the server answer from etcd with a quorum
// read, so the answer is at least as new as any write that finished before
// the call. Errors wrap the API error (apierrors.IsNotFound still works).
func (c *Clients) LivePod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	ctx, cancel := c.requestContext(ctx)
	defer cancel()
	pod, err := c.Kube.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading pod %s/%s from the API server: %w", namespace, name, err)
	}
	return pod, nil
}

// LiveBatchSandbox reads a BatchSandbox straight from the API server (a
// quorum read, as LivePod): a pooled sandbox's allocation is re-read just
// before an exec, because the Pool may have handed its Pod to another
// sandbox since the fleet model last heard of it.
func (c *Clients) LiveBatchSandbox(ctx context.Context, namespace, name string) (*model.BatchSandbox, error) {
	ctx, cancel := c.requestContext(ctx)
	defer cancel()
	u, err := c.Dynamic.Resource(BatchSandboxGVR).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading batchsandbox %s/%s from the API server: %w", namespace, name, err)
	}
	return codec.ModelBatchSandbox(u)
}
