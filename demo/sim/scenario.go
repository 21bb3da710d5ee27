package sim

// The scenarios a sandbox is given at birth and the engines that run it,
// and how the churn draws both.

// Scenario is the life cycle a sandbox is given when it is created.
type Scenario string

// The scenarios a simulated sandbox can be given.
const (
	Normal             Scenario = "normal"              // runs until its user deletes it
	InstantDeath       Scenario = "instant-death"       // `tini -- bash` without a TTY: exits 0 at once; the engine keeps the IP
	OOMKill            Scenario = "oom-kill"            // killed by the kernel: exit 137, OOMKilled, restarted
	LivenessKill       Scenario = "liveness-kill"       // blocks; Unhealthy x3, Killing, SIGKILL after the grace period, restarted
	Evicted            Scenario = "evicted"             // node memory pressure: Pod Failed, reason Evicted, DisruptionTarget
	StuckTerminating   Scenario = "stuck-terminating"   // deleted while its init image still pulls: Terminating, main in PodInitializing
	KeepAlive          Scenario = "keep-alive"          // osv1.BootstrapPath.sh tail -f /dev/null on an image with an ENTRYPOINT
	UnreadableImage    Scenario = "unreadable-image"    // keep-alive on an image whose registry does not answer
	Recreated          Scenario = "recreated"           // its Pod is re-created under the same name (new UID)
	IPStale            Scenario = "ip-stale"            // its (pool) Pod moves to another IP; the engine keeps the old one
	PodGone            Scenario = "pod-gone"            // the Pool deletes its Pod; the sandbox still lists it
	FinalizerStuck     Scenario = "finalizer-stuck"     // the BatchSandbox stays Terminating on a finalizer
	FailedSticky       Scenario = "failed-sticky"       // ImagePullBackOff -> Failed, then the Pod runs; Failed stays
	NoExecd            Scenario = "no-execd"            // template without osv1.BootstrapPath.sh: Ready, but execd never starts
	ExpiringSoon       Scenario = "expiring-soon"       // spec.expireTime minutes away
	BadAnnotation      Scenario = "bad-annotation"      // endpoints annotation is not valid JSON
	UnexplainedRestart Scenario = "unexplained-restart" // exit 2, nothing explains it
	DeletedHeld        Scenario = "deleted-held"        // deleted while running: gone at once, its Pod held Terminating (a slow kubelet)
)

// Scenarios lists every scenario, in a fixed order.
func Scenarios() []Scenario {
	return []Scenario{Normal, InstantDeath, OOMKill, LivenessKill, Evicted, StuckTerminating, KeepAlive,
		UnreadableImage, Recreated, IPStale, PodGone, FinalizerStuck, FailedSticky, NoExecd, ExpiringSoon,
		BadAnnotation, UnexplainedRestart, DeletedHeld}
}

// churnWeights: how often each scenario is drawn for a churned sandbox.
var churnWeights = []struct {
	s Scenario
	w int
}{
	{Normal, 60}, {InstantDeath, 12}, {OOMKill, 3}, {LivenessKill, 2}, {Evicted, 2}, {StuckTerminating, 2},
	{KeepAlive, 6}, {UnreadableImage, 2}, {Recreated, 3}, {IPStale, 2}, {PodGone, 1}, {FinalizerStuck, 1},
	{FailedSticky, 1}, {NoExecd, 1}, {ExpiringSoon, 2}, {UnexplainedRestart, 1},
}

// Engine of a simulated sandbox.
type Engine string

// The engines the simulator writes sandboxes for.
const (
	EngineBatch  Engine = "bsbx"   // non-pooled BatchSandbox
	EnginePooled Engine = "pooled" // BatchSandbox allocated from a Pool
	EngineAgent  Engine = "agent"  // agent-sandbox Sandbox
	EnginePod    Engine = "pod"    // plain labelled Pod
)

// supports says which scenarios make sense for an engine.
func supports(eng Engine, sc Scenario) bool {
	switch sc {
	case IPStale, PodGone:
		return eng == EnginePooled
	case NoExecd, DeletedHeld:
		return eng == EngineBatch
	case FinalizerStuck, FailedSticky, ExpiringSoon, BadAnnotation:
		return eng == EngineBatch || eng == EnginePooled
	case StuckTerminating, KeepAlive, UnreadableImage:
		return eng != EnginePooled
	case Recreated:
		return eng == EngineBatch || eng == EnginePod
	}
	return true
}

// pickEngine draws the engine of a churned sandbox by Config.Mix.
func (s *Sim) pickEngine() Engine {
	m := s.cfg.Mix
	if s.cfg.PoolBuffer < 0 {
		m.Pooled = 0
	}
	total := m.BatchSandbox + m.Pooled + m.Agent + m.PlainPod
	if total <= 0 {
		return EngineBatch
	}
	n := s.rng.Intn(total)
	switch {
	case n < m.BatchSandbox:
		return EngineBatch
	case n < m.BatchSandbox+m.Pooled:
		return EnginePooled
	case n < m.BatchSandbox+m.Pooled+m.Agent:
		return EngineAgent
	}
	return EnginePod
}

// pickScenario draws a churned sandbox's scenario by churnWeights; one the
// engine does not support becomes Normal.
func (s *Sim) pickScenario(eng Engine) Scenario {
	total := 0
	for _, w := range churnWeights {
		total += w.w
	}
	n := s.rng.Intn(total)
	var sc Scenario
	for _, w := range churnWeights {
		if n < w.w {
			sc = w.s
			break
		}
		n -= w.w
	}
	if !supports(eng, sc) {
		return Normal
	}
	return sc
}
