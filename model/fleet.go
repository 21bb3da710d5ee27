package model

// CONTRACT STUB — the model helper replaces the bodies; the signatures are the
// contract kube/, actions/ and ui/ build against.

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// FleetOptions configures derivation.
type FleetOptions struct {
	// StuckAfter: a Pod deleting for longer than its grace period plus this is stuck. Default 5m.
	StuckAfter time.Duration
	// PodSelector picks plain-Pod sandboxes; default: has label opensandbox.io/id.
	PodSelector labels.Selector
	// ExpiringWithin: a sandbox whose expireTime is closer than this gets EXPIRING_SOON. Default 10m.
	ExpiringWithin time.Duration
	// Now is the clock (tests pin it). Default time.Now.
	Now func() time.Time
}

// Fleet is the live, incrementally derived picture of every sandbox. kube/
// calls the Upsert/Delete methods from informer handlers; readers take
// Snapshots. Safe for concurrent use. Work per event is proportional to the
// sandboxes the event touches, never to the fleet.
type Fleet struct{}

func NewFleet(opts FleetOptions) *Fleet { return &Fleet{} }

func (f *Fleet) UpsertPod(p *corev1.Pod)                   {}
func (f *Fleet) DeletePod(p *corev1.Pod)                   {}
func (f *Fleet) UpsertBatchSandbox(b *BatchSandbox)        {}
func (f *Fleet) DeleteBatchSandbox(namespace, name string) {}
func (f *Fleet) UpsertAgentSandbox(s *AgentSandbox)        {}
func (f *Fleet) DeleteAgentSandbox(namespace, name string) {}
func (f *Fleet) UpsertPool(p *Pool)                        {}
func (f *Fleet) DeletePool(namespace, name string)         {}
func (f *Fleet) SetImageConfig(cfg ImageConfig)            {}
func (f *Fleet) SetStatus(st SourceStatus)                 {}
func (f *Fleet) Tick()                                     {}
func (f *Fleet) Changes() <-chan struct{}                  { return nil }
func (f *Fleet) PendingImageChecks() []string              { return nil }
func (f *Fleet) Snapshot() *Snapshot                       { return &Snapshot{} }

// Snapshot is a consistent, immutable view of the fleet at one moment.
type Snapshot struct {
	Version   uint64
	Status    SourceStatus
	Sandboxes []*Sandbox    // sorted by Key
	Pods      []*corev1.Pod // every Pod behind a sandbox, sorted by namespace/name
	Pools     []*Pool
}

func (s *Snapshot) Sandbox(key string) *Sandbox                  { return nil }
func (s *Snapshot) IPHistory(ip string) []IPHolding              { return nil }
func (s *Snapshot) SandboxOfPod(namespace, name string) *Sandbox { return nil }
