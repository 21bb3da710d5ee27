package sim

import (
	"context"
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The simulated nodes: names, addresses, Pod CIDRs and conditions.

// nodeName and hostIP name node i and give its InternalIP.
func (s *Sim) nodeName(i int) string { return fmt.Sprintf("%s%d", s.cfg.NodePrefix, i) }

func (s *Sim) hostIP(i int) string { return fmt.Sprintf("192.168.10.%d", 10+i) }

// ensureNode creates node i, Ready, with its Pod CIDR; a node of that name
// already there (an earlier run's) is kept as it is.
func (s *Sim) ensureNode(ctx context.Context, i int) error {
	name := s.nodeName(i)
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "node-role.kubernetes.io/sandbox": "",
		}},
		Spec: corev1.NodeSpec{PodCIDR: s.podCIDR(i), PodCIDRs: []string{s.podCIDR(i)}},
	}
	s.stamp(node)
	created, err := s.kube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{FieldManager: fieldManager})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("creating node %s: %w", name, err)
	}
	s.op("create", "nodes", "", name, "")
	created.Status = corev1.NodeStatus{
		Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: s.hostIP(i)}, {Type: corev1.NodeHostName, Address: name}},
		Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status",
				LastHeartbeatTime: metav1.NewTime(s.now), LastTransitionTime: metav1.NewTime(s.now)},
			{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientMemory",
				LastHeartbeatTime: metav1.NewTime(s.now), LastTransitionTime: metav1.NewTime(s.now)},
		},
		Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16"), corev1.ResourceMemory: resource.MustParse("64Gi"), corev1.ResourcePods: resource.MustParse("110")},
	}
	created.Status.Allocatable = created.Status.Capacity
	if _, err := s.kube.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{FieldManager: fieldManager}); err != nil {
		return fmt.Errorf("writing node %s status: %w", name, err)
	}
	s.op("status", "nodes", "", name, "Ready")
	return nil
}

// podCIDR is the node's range as written into Node.spec.podCIDR.
func (s *Sim) podCIDR(i int) string {
	first, _ := netip.ParseAddr(s.ipam.first(i))
	bits := 32
	for size := 1; size < s.ipam.stride; size *= 2 {
		bits--
	}
	p, _ := first.Prefix(bits)
	return p.String()
}

// setMemoryPressure writes node n's MemoryPressure condition as its
// kubelet reports it.
func (s *Sim) setMemoryPressure(ctx context.Context, n int, on bool) error {
	nodes := s.kube.CoreV1().Nodes()
	node, err := nodes.Get(ctx, s.nodeName(n), metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading node %s: %w", s.nodeName(n), err)
	}
	for i := range node.Status.Conditions {
		c := &node.Status.Conditions[i]
		if c.Type != corev1.NodeMemoryPressure {
			continue
		}
		c.Status, c.Reason, c.Message = corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"
		if on {
			c.Status, c.Reason, c.Message = corev1.ConditionTrue, "KubeletHasInsufficientMemory", "kubelet has insufficient memory available"
		}
		c.LastTransitionTime, c.LastHeartbeatTime = metav1.NewTime(s.now), metav1.NewTime(s.now)
	}
	if _, err := nodes.UpdateStatus(ctx, node, metav1.UpdateOptions{FieldManager: fieldManager}); err != nil {
		return fmt.Errorf("writing node %s status: %w", node.Name, err)
	}
	s.op("status", "nodes", "", node.Name, fmt.Sprintf("MemoryPressure=%v", on))
	return nil
}

// leastUsedNode is the node with the most free Pod IPs (the lowest index on
// a tie), where a scheduler spreading Pods would put the next one.
func (s *Sim) leastUsedNode() int {
	best := 0
	for i := 1; i < s.cfg.Nodes; i++ {
		if s.ipam.available(i) > s.ipam.available(best) {
			best = i
		}
	}
	return best
}
