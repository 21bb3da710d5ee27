package sim

import (
	"context"
	"time"
)

// example is one pinned sandbox of the initial fleet.
type example struct {
	engine   Engine
	scenario Scenario
	node     int           // -1: any
	at       time.Duration // after the simulation start (the start of the warm-up)
	live     bool          // created at the end of the warm-up instead (it must be fresh)
}

// examples give every state, notice and finding of the fleet model one
// instance right away. Node 0 is used for IP reuse (a dead sandbox's IP going to a new Pod): the
// instant death frees its IP and the sandbox created next on node 0 gets it.
var examples = []example{
	{EngineBatch, Normal, -1, 0, false},
	{EnginePooled, Normal, -1, 0, false},
	{EngineAgent, Normal, -1, 0, false},
	{EnginePod, Normal, -1, 0, false},
	{EngineBatch, InstantDeath, 0, 1 * time.Second, false},  // POD_DEAD, then IP_TAKEN by the next one on node 0
	{EngineBatch, Normal, 0, 12 * time.Second, false},       // takes the dead sandbox's IP
	{EngineAgent, InstantDeath, 1, 2 * time.Second, false},  // agent Sandbox recording a dead Pod
	{EnginePod, Normal, 1, 14 * time.Second, false},         // takes the agent's dead IP
	{EnginePod, OOMKill, -1, 3 * time.Second, false},        // RESTART_OOM
	{EngineAgent, LivenessKill, -1, 3 * time.Second, false}, // RESTART_LIVENESS with Unhealthy/Killing events
	{EnginePod, Evicted, 2, 4 * time.Second, false},         // RESTART_EVICTED
	{EnginePod, UnexplainedRestart, -1, 4 * time.Second, false},
	{EngineBatch, StuckTerminating, -1, 5 * time.Second, false}, // STUCK_TERMINATING, main in PodInitializing
	// A pile-up of deleted sandboxes' Pods stuck Terminating,
	// most still pulling their image, one held by a slow kubelet.
	// They hold their IPs: on nodes 2 and 3, away from the IP reuse of
	// nodes 0 and 1.
	{EngineBatch, StuckTerminating, 2, 5 * time.Second, false},
	{EngineBatch, StuckTerminating, 3, 5 * time.Second, false},
	{EngineBatch, StuckTerminating, 2, 6 * time.Second, false},
	{EngineBatch, StuckTerminating, 3, 6 * time.Second, false},
	{EngineBatch, StuckTerminating, 2, 7 * time.Second, false},
	{EngineBatch, DeletedHeld, 3, 5 * time.Second, false},
	{EngineBatch, KeepAlive, -1, 5 * time.Second, false},       // ENTRYPOINT_NOT_RUN
	{EngineBatch, UnreadableImage, -1, 6 * time.Second, false}, // IMAGE_CONFIG_UNREADABLE
	{EngineBatch, Recreated, -1, 6 * time.Second, false},       // UID_CHANGED (re-created after the warm-up)
	{EnginePod, Recreated, -1, 6 * time.Second, false},
	{EnginePooled, IPStale, -1, 7 * time.Second, false},        // IP_STALE
	{EnginePooled, PodGone, -1, 7 * time.Second, false},        // POD_GONE
	{EngineBatch, FinalizerStuck, -1, 8 * time.Second, false},  // BatchSandbox stuck on a finalizer
	{EnginePooled, FinalizerStuck, -1, 8 * time.Second, false}, // ... on the pool-allocation finalizer
	{EngineBatch, FailedSticky, -1, 9 * time.Second, false},    // FAILED_STICKY
	{EngineBatch, NoExecd, -1, 9 * time.Second, false},         // NOT_EXEC_READY
	{EngineBatch, BadAnnotation, -1, 10 * time.Second, false},  // BAD_ANNOTATION
	{EngineBatch, ExpiringSoon, -1, 0, true},                   // EXPIRING_SOON
	{EngineAgent, ExpiringSoon, -1, 0, false},                  // expires 2m in: status wiped while its Pod terminates, then Expired
}

func (s *Sim) seedExamples() {
	for _, ex := range examples {
		at := ex.at
		if ex.live {
			at = s.liveStart.Sub(s.now) + ex.at
		}
		s.after(at, "example "+string(ex.scenario), func(ctx context.Context) error {
			return s.createSandbox(ctx, createOpts{engine: ex.engine, scenario: ex.scenario, node: ex.node, pinned: ex.scenario != ExpiringSoon})
		})
	}
}
