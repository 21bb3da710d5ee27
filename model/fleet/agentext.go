package fleet

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sandscope/sandscope/internal/textsafe"
	"github.com/sandscope/sandscope/model"
)

// agentExt holds the agent-sandbox extensions' objects. They change a
// sandbox's row only through the Sandbox itself (its ownerReferences name
// its claim or pool), so an update here re-derives nothing: the lists are
// rebuilt for the next Snapshot, and the rows joining claims and pools to
// sandboxes are built by the Snapshot on first use.
type agentExt struct {
	claims    map[string]*model.SandboxClaim
	warmPools map[string]*model.WarmPool
	templates map[string]*model.SandboxTemplate
	dirty     bool
	// replaced: per pool (namespace/name), the members seen deleted while
	// not Ready, oldest first, those of the last WarmPoolChurnWindow. A
	// new map on every change: Snapshots share it.
	replaced map[string][]model.MemberReplaced

	claimList    []*model.SandboxClaim
	warmPoolList []*model.WarmPool
	templateList []*model.SandboxTemplate
}

func (x *agentExt) published() ([]*model.SandboxClaim, []*model.WarmPool, []*model.SandboxTemplate) {
	if x.dirty {
		x.claimList = sortedValues(x.claims, func(c *model.SandboxClaim) *model.ObjectMeta { return &c.ObjectMeta })
		x.warmPoolList = sortedValues(x.warmPools, func(p *model.WarmPool) *model.ObjectMeta { return &p.ObjectMeta })
		x.templateList = sortedValues(x.templates, func(t *model.SandboxTemplate) *model.ObjectMeta { return &t.ObjectMeta })
		x.dirty = false
	}
	return x.claimList, x.warmPoolList, x.templateList
}

func sortedValues[T any](m map[string]T, meta func(T) *model.ObjectMeta) []T {
	if len(m) == 0 {
		return nil
	}
	out := make([]T, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b T) int {
		ma, mb := meta(a), meta(b)
		return cmp.Or(cmp.Compare(ma.Namespace, mb.Namespace), cmp.Compare(ma.Name, mb.Name))
	})
	return out
}

func upsertExt[T any](f *Fleet, m *map[string]T, ns, name string, v T) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if *m == nil {
		*m = make(map[string]T)
	}
	(*m)[nn(ns, name)] = v
	f.version++
	f.ext.dirty = true
	f.notify()
}

func deleteExt[T any](f *Fleet, m map[string]T, ns, name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := m[nn(ns, name)]; !ok {
		return
	}
	delete(m, nn(ns, name))
	f.version++
	f.ext.dirty = true
	f.notify()
}

// UpsertSandboxClaim records an added or updated SandboxClaim.
func (f *Fleet) UpsertSandboxClaim(c *model.SandboxClaim) {
	if c != nil {
		upsertExt(f, &f.ext.claims, c.Namespace, c.Name, c)
	}
}

// DeleteSandboxClaim records a SandboxClaim's deletion.
func (f *Fleet) DeleteSandboxClaim(namespace, name string) {
	deleteExt(f, f.ext.claims, namespace, name)
}

// UpsertWarmPool records an added or updated SandboxWarmPool.
func (f *Fleet) UpsertWarmPool(p *model.WarmPool) {
	if p != nil {
		upsertExt(f, &f.ext.warmPools, p.Namespace, p.Name, p)
	}
}

// DeleteWarmPool records a SandboxWarmPool's deletion.
func (f *Fleet) DeleteWarmPool(namespace, name string) {
	deleteExt(f, f.ext.warmPools, namespace, name)
}

// UpsertSandboxTemplate records an added or updated SandboxTemplate.
func (f *Fleet) UpsertSandboxTemplate(t *model.SandboxTemplate) {
	if t != nil {
		upsertExt(f, &f.ext.templates, t.Namespace, t.Name, t)
	}
}

// DeleteSandboxTemplate records a SandboxTemplate's deletion.
func (f *Fleet) DeleteSandboxTemplate(namespace, name string) {
	deleteExt(f, f.ext.templates, namespace, name)
}

// maxReplacedKept caps the replacements kept per pool: the finding names
// a few and counts the rest.
const maxReplacedKept = 32

// noteMemberGone records a deleted agent Sandbox that was a warm pool's
// member and not Ready: the warm-pool controller deleting a member stuck
// unready, which it replaces. A reader that watches sees the pool churn;
// the objects left at any moment show only young members. Called with f.mu
// held.
func (f *Fleet) noteMemberGone(a *model.AgentSandbox, now time.Time) {
	pool := a.AgentOwner(model.KindSandboxWarmPool)
	if pool == "" || agentReady(a) {
		return
	}
	k := nn(a.Namespace, pool)
	var kept []model.MemberReplaced
	for _, r := range f.ext.replaced[k] {
		if now.Sub(r.At) <= WarmPoolChurnWindow {
			kept = append(kept, r)
		}
	}
	kept = append(kept, model.MemberReplaced{Sandbox: a.Name, At: now})
	if len(kept) > maxReplacedKept {
		kept = kept[len(kept)-maxReplacedKept:]
	}
	m := make(map[string][]model.MemberReplaced, len(f.ext.replaced)+1)
	for key, v := range f.ext.replaced {
		m[key] = v
	}
	m[k] = kept
	f.ext.replaced = m
}

func agentReady(a *model.AgentSandbox) bool {
	for _, c := range a.Conditions {
		if c.Type == "Ready" {
			return c.Status == "True"
		}
	}
	return false
}

// ClaimRows joins every claim to the Sandbox it is bound to: the one its
// status (or annotation) names, else the one whose controller it is.
// Built on first use. Read only.
func (s *Snapshot) ClaimRows() []model.ClaimRow {
	s.buildExtRows()
	return s.claimRow
}

// WarmPoolRows counts, for every warm pool, its members (ready or not), the
// claims bound through it and those still waiting. Built on first use.
func (s *Snapshot) WarmPoolRows() []model.WarmPoolRow {
	s.buildExtRows()
	return s.poolRow
}

// ClaimOf finds a claim's row by namespace and name.
func (s *Snapshot) ClaimOf(namespace, name string) (model.ClaimRow, bool) {
	for _, r := range s.ClaimRows() {
		if r.Claim.Namespace == namespace && r.Claim.Name == name {
			return r, true
		}
	}
	return model.ClaimRow{}, false
}

func (s *Snapshot) buildExtRows() {
	s.extOnce.Do(func() {
		if len(s.Claims) == 0 && len(s.WarmPools) == 0 {
			return
		}
		// Agent Sandboxes by the claim or pool that controls them.
		byClaim := map[string]*model.Sandbox{}
		members := map[string][]*model.Sandbox{}
		prefix := string(model.EngineAgent) + "/"
		n := s.NumSandboxes()
		for i := 0; i < n; i++ {
			sb := s.SandboxAt(i)
			if len(sb.Key) < len(prefix) || sb.Key[:len(prefix)] != prefix || sb.Meta == nil {
				continue
			}
			if c := sb.Meta.AgentOwner(model.KindSandboxClaim); c != "" {
				byClaim[nn(sb.Namespace(), c)] = sb
			}
			if p := sb.Meta.AgentOwner(model.KindSandboxWarmPool); p != "" {
				members[nn(sb.Namespace(), p)] = append(members[nn(sb.Namespace(), p)], sb)
			}
		}
		type poolCount struct {
			claimed, waiting, cold int
			oldest                 model.ObjectMeta
		}
		counts := map[string]*poolCount{}
		s.claimRow = make([]model.ClaimRow, 0, len(s.Claims))
		for _, c := range s.Claims {
			row := model.ClaimRow{Claim: c}
			if c.Sandbox != "" {
				row.Sandbox = s.Sandbox(model.SandboxKey(model.EngineAgent, c.Namespace, c.Sandbox))
			}
			if row.Sandbox == nil {
				row.Sandbox = byClaim[nn(c.Namespace, c.Name)]
			}
			s.claimRow = append(s.claimRow, row)
			if c.WarmPool == "" {
				continue
			}
			k := nn(c.Namespace, c.WarmPool)
			pc := counts[k]
			if pc == nil {
				pc = &poolCount{}
				counts[k] = pc
			}
			switch c.State() {
			case model.ClaimBound:
				pc.claimed++
				if row.Sandbox != nil && row.Sandbox.LaunchType() == model.LaunchCold {
					pc.cold++
				}
			case model.ClaimPending:
				pc.waiting++
				if pc.oldest.Created().IsZero() || c.Created().Before(pc.oldest.Created()) {
					pc.oldest = c.ObjectMeta
				}
			}
		}
		s.poolRow = make([]model.WarmPoolRow, 0, len(s.WarmPools))
		for _, p := range s.WarmPools {
			k := nn(p.Namespace, p.Name)
			row := model.WarmPoolRow{Pool: p, Members: len(members[k])}
			for _, sb := range members[k] {
				if sb.EnginePhase == "Ready" {
					row.Ready++
				} else {
					row.Unready = append(row.Unready, sb)
				}
			}
			row.Replaced = s.replaced[k]
			if pc := counts[k]; pc != nil {
				row.Claimed, row.Waiting, row.OldestWaiting, row.Cold = pc.claimed, pc.waiting, pc.oldest.Created(), pc.cold
			}
			s.poolRow = append(s.poolRow, row)
		}
	})
}

// Thresholds of the extension findings.
const (
	// ClaimPendingAfter: a claim unbound for longer is CLAIM_PENDING (the
	// controller adopts a member or makes a Sandbox within seconds).
	ClaimPendingAfter = 2 * time.Minute
	// WarmPoolStartWithin: a member not Ready this long after it was made
	// is not starting. The controller deletes a member not Ready 5 minutes
	// after it was made and makes another, so a pool whose members never
	// become ready shows, at any moment, only members younger than that:
	// a bound of 5 minutes would hardly ever see one.
	WarmPoolStartWithin = 2 * time.Minute
	// WarmPoolChurnWindow: how long a replaced member (seen deleted while
	// not Ready) counts as evidence that the pool churns.
	WarmPoolChurnWindow = 10 * time.Minute
)

// ExtFinding is a notice about a warm pool or a claim, with the sandbox it
// is reported under ("" for a pool: it is about no one sandbox).
type ExtFinding struct {
	Namespace, Sandbox string
	Notice             model.Notice
}

// ExtensionFindings reports the warm pools and claims at now:
//   - WARM_POOL_EXHAUSTED: a pool with no ready member while claims wait on
//     it, or while claims through it got cold-started Sandboxes;
//   - WARM_POOL_DEGRADED: fewer ready members than wanted (status.readyReplicas
//     below spec.replicas) while members do not become ready: one not Ready
//     WarmPoolStartWithin after it was made, or members the controller
//     replaced (seen deleted while not Ready) within WarmPoolChurnWindow;
//   - CLAIM_PENDING: a claim unbound for longer than ClaimPendingAfter;
//   - CLAIM_SANDBOX_DEAD: a bound claim whose Sandbox is gone, or whose Pod
//     is dead or gone: the user still holds a claim on nothing that runs.
func (s *Snapshot) ExtensionFindings(now time.Time) []ExtFinding {
	var out []ExtFinding
	obs := func(text string) model.Evidence { return model.Evidence{Kind: model.Observed, Text: text} }
	for _, r := range s.WarmPoolRows() {
		p := r.Pool
		if p.ReadyReplicas == 0 && p.Desired > 0 && (r.Waiting > 0 || r.Cold > 0) {
			msg := fmt.Sprintf("warm pool %s has no ready member (%d wanted, %d held)", p.Name, p.Desired, p.Replicas)
			ev := []model.Evidence{obs(fmt.Sprintf("SandboxWarmPool %s/%s status.readyReplicas 0, status.replicas %d, spec.replicas %d", p.Namespace, p.Name, p.Replicas, p.Desired))}
			if r.Waiting > 0 {
				msg += fmt.Sprintf(" while %d claim(s) wait", r.Waiting)
				ev = append(ev, obs(fmt.Sprintf("%d SandboxClaim(s) on it not bound, the oldest made %s", r.Waiting, r.OldestWaiting.UTC().Format(time.RFC3339))))
			}
			if r.Cold > 0 {
				msg += fmt.Sprintf("; %d claim(s) got a cold-started Sandbox instead", r.Cold)
				ev = append(ev, obs(fmt.Sprintf("%d bound claim(s) through it hold a Sandbox named after the claim (launch type cold)", r.Cold)))
			}
			out = append(out, ExtFinding{Namespace: p.Namespace, Notice: model.Notice{Code: model.CodeWarmPoolExhausted,
				Severity: model.SeverityWarning, Message: msg, Evidence: ev}})
		}
		if f, ok := degraded(r, now); ok {
			out = append(out, f)
		}
	}
	for _, r := range s.ClaimRows() {
		c := r.Claim
		switch c.State() {
		case model.ClaimPending:
			if age := now.Sub(c.Created()); age > ClaimPendingAfter {
				ev := []model.Evidence{obs(fmt.Sprintf("SandboxClaim %s/%s made %s, no status.sandbox", c.Namespace, c.Name, c.Created().UTC().Format(time.RFC3339)))}
				if rc := c.ReadyCondition(); rc != nil {
					ev = append(ev, obs("Ready "+rc.Status+" "+textsafe.OrDash(rc.Reason)+": "+rc.Message))
				}
				out = append(out, ExtFinding{Namespace: c.Namespace, Sandbox: c.Name, Notice: model.Notice{Code: model.CodeClaimPending,
					Severity: model.SeverityWarning,
					Message:  fmt.Sprintf("claim %s on warm pool %s unbound for %s", c.Name, textsafe.OrDash(c.WarmPool), age.Round(time.Second)),
					Evidence: ev}})
			}
		case model.ClaimBound:
			sb := r.Sandbox
			var why string
			var ev []model.Evidence
			switch {
			case sb == nil:
				why = "its Sandbox " + c.Sandbox + " no longer exists"
				ev = []model.Evidence{obs("SandboxClaim " + c.Namespace + "/" + c.Name + " status.sandbox.name " + c.Sandbox), obs("Sandbox " + c.Namespace + "/" + c.Sandbox + " not found")}
			case sb.State == model.StateDead || sb.State == model.StateGone || sb.State == model.StateFailed || sb.State == model.StateExpired:
				why = "its Sandbox " + sb.Name() + " is " + sb.State.String()
				ev = []model.Evidence{obs("SandboxClaim " + c.Namespace + "/" + c.Name + " bound to Sandbox " + sb.Name()),
					{Kind: model.Inferred, Text: "Sandbox " + sb.Name() + " state " + sb.State.String() + ", identity " + string(sb.Identity())}}
			}
			if why != "" {
				name := c.Sandbox
				if sb != nil {
					name = sb.Name()
				}
				out = append(out, ExtFinding{Namespace: c.Namespace, Sandbox: name, Notice: model.Notice{Code: model.CodeClaimSandboxDead,
					Severity: model.SeverityError, Message: "claim " + c.Name + " is still held but " + why, Evidence: ev}})
			}
		}
	}
	return out
}

// degraded is WARM_POOL_DEGRADED for one pool at now: the pool is short of
// ready members, as its status counts them, and its members are not
// starting: one has been not Ready for WarmPoolStartWithin since it was
// made, or the controller replaced members stuck unready (seen by this
// reader) within WarmPoolChurnWindow. A pool refilling after a claim (a
// young member starting) is neither.
func degraded(r model.WarmPoolRow, now time.Time) (ExtFinding, bool) {
	p := r.Pool
	if p.ReadyReplicas >= p.Desired {
		return ExtFinding{}, false
	}
	var slow []string
	for _, sb := range r.Unready {
		if age := now.Sub(sb.CreatedAt()); age > WarmPoolStartWithin {
			slow = append(slow, fmt.Sprintf("%s (%s, %s, made %s ago)", sb.Name(), sb.State, textsafe.OrDash(sb.EnginePhase), age.Round(time.Second)))
		}
	}
	var churn []string
	for _, x := range r.Replaced {
		if now.Sub(x.At) <= WarmPoolChurnWindow {
			churn = append(churn, x.Sandbox+" at "+x.At.UTC().Format(time.RFC3339))
		}
	}
	if len(slow) == 0 && len(churn) == 0 {
		return ExtFinding{}, false
	}
	obs := func(text string) model.Evidence { return model.Evidence{Kind: model.Observed, Text: text} }
	msg := fmt.Sprintf("warm pool %s has %d of %d ready member(s) and its members do not become ready", p.Name, p.ReadyReplicas, p.Desired)
	ev := []model.Evidence{obs(fmt.Sprintf("SandboxWarmPool %s/%s status.readyReplicas %d, status.replicas %d, spec.replicas %d", p.Namespace, p.Name, p.ReadyReplicas, p.Replicas, p.Desired))}
	if len(slow) > 0 {
		msg += fmt.Sprintf(": %d not Ready %s after they were made", len(slow), WarmPoolStartWithin)
		ev = append(ev, obs("members not Ready: "+strings.Join(slow[:min(len(slow), 5)], ", ")))
	}
	if len(churn) > 0 {
		if len(slow) > 0 {
			msg += ";"
		} else {
			msg += ":"
		}
		msg += fmt.Sprintf(" %d replaced unready in the last %s", len(churn), WarmPoolChurnWindow)
		ev = append(ev, obs("members deleted while not Ready (seen by this reader): "+strings.Join(churn[max(0, len(churn)-5):], ", ")))
	}
	ev = append(ev, model.Evidence{Kind: model.Inferred, Text: "the controller deletes a member not Ready 5 minutes after it was made and makes another: " +
		"the pool stays short while it churns; `kubectl describe pod` of a member says why it does not start"})
	return ExtFinding{Namespace: p.Namespace, Notice: model.Notice{Code: model.CodeWarmPoolDegraded, Severity: model.SeverityWarning,
		Message: msg, Evidence: ev}}, true
}
