package fleet

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// StuckPod is one Pod stuck Terminating, as a fleet summary counts it.
type StuckPod struct {
	Namespace       string
	Pod             string
	Sandbox         string // the sandbox's Key
	Node            string // "" while unbound
	Image           string // the main container's image
	DeletingSince   time.Time
	PodInitializing bool
}

// StuckPodsOf lists the Pods stuck Terminating in a Snapshot, each once
// (the sandbox it serves first, in key order), the ones the header's
// "stuck" and each row's STUCK_TERMINATING count.
func StuckPodsOf(s *Snapshot) []StuckPod {
	var out []StuckPod
	seen := map[string]bool{}
	for i := range s.NumSandboxes() {
		sb := s.SandboxAt(i)
		for j := range sb.Slots {
			sl := &sb.Slots[j]
			if sl.Stuck == nil || sl.Pod == nil {
				continue
			}
			k := nn(sl.Pod.Namespace, sl.Pod.Name)
			if seen[k] {
				continue
			}
			seen[k] = true
			sp := StuckPod{Namespace: sl.Pod.Namespace, Pod: sl.Pod.Name, Sandbox: sb.Key, Node: sl.Pod.Spec.NodeName,
				DeletingSince: sl.Stuck.DeletingSince, PodInitializing: sl.Stuck.PodInitializing}
			if spec, st := sl.Pod.Main(); spec != nil {
				sp.Image = spec.Image
			} else if st != nil {
				sp.Image = st.Image
			}
			out = append(out, sp)
		}
	}
	return out
}

// StuckSummary sums up the Pods stuck Terminating: deleted Pods still hold
// quota, and while their image pull runs, a pull slot on their node.
type StuckSummary struct {
	Pods            int     `json:"pods"`
	PodInitializing int     `json:"podInitializing"`  // of them, main container still waiting in PodInitializing
	AgeMedian       float64 `json:"ageMedianSeconds"` // since deletionTimestamp
	AgeP90          float64 `json:"ageP90Seconds"`
	TopNodes        []Count `json:"topNodes"`
	TopImages       []Count `json:"topImages"`
	// Objects counts the sandbox objects themselves stuck Terminating on
	// finalizers (their Pods may be gone): the rest of what STUCK_TERMINATING lists.
	Objects int `json:"objects"`
}

// Count is how many of something there are.
type Count struct {
	Name string `json:"name"`
	N    int    `json:"pods"`
}

// StuckTop is how many nodes and images a StuckSummary names.
const StuckTop = 5

// StuckObjectsOf counts the sandboxes of a Snapshot whose object is stuck
// Terminating on finalizers.
func StuckObjectsOf(s *Snapshot) int {
	n := 0
	for i := range s.NumSandboxes() {
		if s.SandboxAt(i).StuckObject() {
			n++
		}
	}
	return n
}

// SummarizeStuck sums up stuck Pods at now. Ages are nearest-rank
// percentiles of the time since each deletionTimestamp.
func SummarizeStuck(pods []StuckPod, now time.Time) StuckSummary {
	s := StuckSummary{Pods: len(pods), TopNodes: []Count{}, TopImages: []Count{}}
	if len(pods) == 0 {
		return s
	}
	ages := make([]time.Duration, len(pods))
	nodes, images := map[string]int{}, map[string]int{}
	for i, p := range pods {
		if p.PodInitializing {
			s.PodInitializing++
		}
		ages[i] = max(now.Sub(p.DeletingSince), 0)
		node := p.Node
		if node == "" {
			node = "(unbound)"
		}
		nodes[node]++
		images[p.Image]++
	}
	slices.Sort(ages)
	rank := func(q float64) time.Duration {
		i := int(math.Ceil(q*float64(len(ages)))) - 1 // nearest rank ceil(q·n), 1-based
		return ages[min(max(i, 0), len(ages)-1)]
	}
	s.AgeMedian, s.AgeP90 = rank(0.5).Seconds(), rank(0.9).Seconds()
	s.TopNodes, s.TopImages = top(nodes, StuckTop), top(images, StuckTop)
	return s
}

// top returns the n largest counts, ties by name.
func top(m map[string]int, n int) []Count {
	out := make([]Count, 0, len(m))
	for k, v := range m {
		out = append(out, Count{Name: k, N: v})
	}
	slices.SortFunc(out, func(a, b Count) int {
		if c := cmp.Compare(b.N, a.N); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return out[:min(n, len(out))]
}
