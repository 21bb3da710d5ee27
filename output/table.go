package output

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/sandscope/sandscope/internal/textsafe"
	"github.com/sandscope/sandscope/model"
)

// A table's columns: the first ones always, those with wide only under -o
// wide (Priority 1, which kubectl's table printer hides otherwise).
func columns(always []string, wide ...string) []metav1.TableColumnDefinition {
	defs := make([]metav1.TableColumnDefinition, 0, len(always)+len(wide))
	for _, name := range always {
		defs = append(defs, metav1.TableColumnDefinition{Name: name, Type: "string"})
	}
	for _, name := range wide {
		defs = append(defs, metav1.TableColumnDefinition{Name: name, Type: "string", Priority: 1})
	}
	return defs
}

// tableBuilder collects rows whose every cell is made safe for a terminal:
// names, messages and labels come from the fleet, and kubectl's printer
// only escapes ESC and cuts at a newline.
type tableBuilder struct {
	table         metav1.Table
	withNamespace bool
	now           time.Time
}

func newTable(withNamespace bool, now time.Time, defs []metav1.TableColumnDefinition) *tableBuilder {
	if withNamespace {
		defs = append([]metav1.TableColumnDefinition{{Name: "Namespace", Type: "string"}}, defs...)
	}
	return &tableBuilder{table: metav1.Table{ColumnDefinitions: defs}, withNamespace: withNamespace, now: now}
}

func (b *tableBuilder) row(namespace string, cells ...string) {
	if b.withNamespace {
		cells = append([]string{namespace}, cells...)
	}
	row := metav1.TableRow{Cells: make([]any, len(cells))}
	for i, c := range cells {
		row.Cells[i] = textsafe.Line(c)
	}
	b.table.Rows = append(b.table.Rows, row)
}

// age is kubectl's AGE: 42s, 5m10s, 3h, 2d.
func (b *tableBuilder) age(t time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(b.now.Sub(t))
}

// SandboxTable has the columns of the terminal UI's sandboxes view; wide
// adds the pool, the claim an agent Sandbox is bound to and how it was
// launched (warm from a pool, cold for its claim), the time left before the
// sandbox expires, and its UID.
func SandboxTable(sbs []*model.Sandbox, withNamespace bool, now time.Time) *metav1.Table {
	b := newTable(withNamespace, now, columns(
		[]string{"Name", "Engine", "Phase", "State", "Identity", "IP", "Pod", "Node", "Restarts", "Age", "Notices"},
		"Pool", "Claim", "Launch", "Expires", "UID"))
	for _, sb := range sbs {
		ip, pod, node := "<none>", "<none>", "<none>"
		if sl := sb.PrimarySlot(); sl != nil {
			ip, pod = orNone(sl.RecordedIP), orNone(sl.PodName)
			if sl.Pod != nil {
				node = orNone(sl.Pod.Spec.NodeName)
			}
			if n := len(sb.Slots); n > 1 {
				pod += fmt.Sprintf(" +%d", n-1)
			}
		}
		expires := "<none>"
		if sb.ExpireTime != nil {
			expires = "expired"
			if left := sb.ExpireTime.Sub(now); left > 0 {
				expires = duration.HumanDuration(left)
			}
		}
		b.row(sb.Namespace(), sb.Name(), string(sb.Engine()), orNone(sb.EnginePhase), sb.State.String(), identityCell(sb),
			ip, pod, node, strconv.Itoa(int(sb.Restarts)), b.age(sb.CreatedAt()), noticeCodes(sb.Notices),
			orNone(sb.Pool), orNone(sb.Claim()), orNone(sb.LaunchType()), expires, orNone(string(sb.UID())))
	}
	return &b.table
}

// PodTable has the columns of the terminal UI's pods view; wide adds the
// main container's image and the Pod's UID.
func PodTable(pods []*model.Pod, sandboxOf func(*model.Pod) string, withNamespace bool, now time.Time) *metav1.Table {
	b := newTable(withNamespace, now, columns(
		[]string{"Name", "Sandbox", "Phase", "IP", "Node", "Container", "Deleting", "Restarts", "Age"},
		"Image", "UID"))
	for _, p := range pods {
		image := "<none>"
		if c, _ := p.Main(); c != nil {
			image = orNone(c.Image)
		}
		deleting := "<none>"
		if p.DeletionTimestamp != nil {
			deleting = b.age(p.DeletionTimestamp.Time)
		}
		b.row(p.Namespace, p.Name, orNone(sandboxOf(p)), orNone(string(p.Status.Phase)), orNone(p.Status.PodIP),
			orNone(p.Spec.NodeName), containerCell(mainContainer(p)), deleting, strconv.Itoa(int(p.Restarts())), b.age(p.Created()),
			image, orNone(string(p.UID)))
	}
	return &b.table
}

// PoolTable lists OpenSandbox Pools and agent-sandbox SandboxWarmPools
// side by side, each column read the way the engine keeps its pool:
// DESIRED (an OpenSandbox Pool's idle buffer, a warm pool's replicas),
// MEMBERS (Pods or Sandboxes it holds), READY (free and ready), CLAIMED
// (handed to a sandbox or claim) and WAITING (claims not bound yet). Wide
// adds an OpenSandbox Pool's min/max and revision, a warm pool's template.
func PoolTable(pools []*model.Pool, warm []model.WarmPoolRow, withNamespace bool, now time.Time) *metav1.Table {
	b := newTable(withNamespace, now, columns(
		[]string{"Name", "Engine", "Desired", "Members", "Ready", "Claimed", "Waiting", "Age"},
		"Pool Min/Max", "Revision", "Template"))
	for _, p := range pools {
		b.row(p.Namespace, p.Name, string(model.EngineBatchSandbox), itoa(p.BufferMin)+"-"+itoa(p.BufferMax), itoa(p.Total),
			itoa(p.Available), itoa(p.Allocated), "<none>", b.age(p.Created()),
			itoa(p.PoolMin)+"-"+itoa(p.PoolMax), orNone(p.Revision), "<none>")
	}
	for _, r := range warm {
		p := r.Pool
		b.row(p.Namespace, p.Name, string(model.EngineAgent), itoa(p.Desired), itoa(p.Replicas), itoa(p.ReadyReplicas),
			strconv.Itoa(r.Claimed), strconv.Itoa(r.Waiting), b.age(p.Created()),
			"<none>", "<none>", orNone(p.Template))
	}
	return &b.table
}

// ClaimTable lists agent-sandbox SandboxClaims: their state, the sandbox
// each is bound to with that sandbox's state and identity, its warm pool
// and age; wide adds how the sandbox was launched and its recorded IP.
func ClaimTable(claims []model.ClaimRow, withNamespace bool, now time.Time) *metav1.Table {
	b := newTable(withNamespace, now, columns(
		[]string{"Name", "State", "Sandbox", "Sandbox State", "Identity", "Pool", "Age"},
		"Launch", "IP"))
	for _, r := range claims {
		c := r.Claim
		sandbox, state, identity, launch, ip := orNone(c.Sandbox), "<none>", "<none>", "<none>", "<none>"
		if sb := r.Sandbox; sb != nil {
			sandbox, state, identity, launch = sb.Name(), sb.State.String(), identityCell(sb), orNone(sb.LaunchType())
			if sl := sb.PrimarySlot(); sl != nil {
				ip = orNone(sl.RecordedIP)
			}
		} else if c.Sandbox != "" {
			state = "<gone>"
		}
		b.row(c.Namespace, c.Name, c.State(), sandbox, state, identity, orNone(c.WarmPool), b.age(c.Created()), launch, ip)
	}
	return &b.table
}

// FindingTable has the columns of `sandscope sweep`'s table; wide adds the
// context and the evidence, joined.
func FindingTable(findings []model.Finding, withNamespace bool, now time.Time) *metav1.Table {
	b := newTable(withNamespace, now, columns(
		[]string{"Code", "Severity", "Sandbox", "Pod", "Message"},
		"Context", "Evidence"))
	for _, f := range findings {
		ev := make([]string, len(f.Evidence))
		for i, e := range f.Evidence {
			ev[i] = string(e.Kind) + ": " + e.Text
		}
		b.row(orNone(f.Namespace), f.Code, string(f.Severity), orNone(f.Sandbox), orNone(f.Pod), f.Message,
			orNone(f.Context), orNone(strings.Join(ev, "; ")))
	}
	return &b.table
}

// identityCell is the IDENTITY column of the terminal UI: the worst state
// of the sandbox's slots, naming the Pod that holds a taken IP, and marked
// "(unchecked)" where other namespaces could not be searched for a holder
// of its address (forbidden, failed or not answered yet).
func identityCell(sb *model.Sandbox) string {
	id := sb.Identity()
	for i := range sb.Slots {
		sl := &sb.Slots[i]
		switch {
		case sl.Identity != id:
		case id == model.IdentityIPTaken && sl.Holder != nil:
			return string(id) + "→" + sl.Holder.Pod
		case sl.NamespaceOnly:
			return string(id) + " (unchecked)"
		}
	}
	return string(id)
}

// containerCell reads Running, Waiting(PodInitializing),
// Terminated(OOMKilled:137), as the terminal UI's pods view.
func containerCell(c *Container) string {
	switch {
	case c == nil || c.State == "":
		return "<none>"
	case c.State == "terminated":
		return fmt.Sprintf("Terminated(%s:%d)", c.Reason, *c.ExitCode)
	case c.State == "waiting":
		return "Waiting(" + c.Reason + ")"
	}
	return "Running"
}

func noticeCodes(ns []model.Notice) string {
	codes := make([]string, len(ns))
	for i, n := range ns {
		codes[i] = n.Code
	}
	return orNone(strings.Join(codes, ","))
}

// orNone is kubectl's placeholder for an empty cell.
func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }
