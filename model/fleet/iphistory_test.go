package fleet

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sandscope/sandscope/model"
)

// holdingsStr renders a history compactly: "uid:from-to" (to "" while held),
// times in seconds after ft0.
func holdingsStr(hs []model.IPHolding) string {
	s := ""
	for _, h := range hs {
		to := ""
		if h.To != nil {
			to = fmt.Sprint(int64(h.To.Sub(ft0) / time.Second))
		}
		s += fmt.Sprintf("%s:%d-%s ", h.UID, int64(h.From.Sub(ft0)/time.Second), to)
	}
	return s
}

// An IP whose only holder (the inline holding) lets go, then is taken by a
// second Pod (the overflow): each version sees its own history.
func TestIPHistoryInlineThenOverflow(t *testing.T) {
	h := newIPHistory()
	const ip = "10.1.0.1"
	sec := func(n int) time.Time { return ft0.Add(time.Duration(n) * time.Second) }
	h.open(ip, nn(ns, "a-0"), "ua", "", sec(0), 1)
	h.setSandbox(ip, "ua", "bsbx/sbx/a")
	h.close(ip, "ua", sec(10), 2)
	h.setSandbox(ip, "ua", "bsbx/sbx/late") // closed: stays as it was
	h.open(ip, nn(ns, "b-0"), "ub", "bsbx/sbx/b", sec(20), 3)
	for ver, want := range map[uint64]string{
		0:  "",
		1:  "ua:0- ",
		2:  "ua:0-10 ",
		3:  "ua:0-10 ub:20- ",
		99: "ua:0-10 ub:20- ",
	} {
		if got := holdingsStr(h.at(ip, ver)); got != want {
			t.Errorf("at version %d: %q, want %q", ver, got, want)
		}
	}
	got := h.at(ip, 3)
	if got[0].Namespace != ns || got[0].Pod != "a-0" || got[0].Sandbox != "bsbx/sbx/a" || got[0].IP != ip ||
		got[1].Namespace != ns || got[1].Pod != "b-0" || got[1].Sandbox != "bsbx/sbx/b" {
		t.Errorf("holdings %+v", got)
	}
	h.close(ip, "ub", sec(30), 4)
	if got := holdingsStr(h.at(ip, 3)); got != "ua:0-10 ub:20- " {
		t.Errorf("a later close seen at version 3: %q", got)
	}
	if got := holdingsStr(h.at(ip, 4)); got != "ua:0-10 ub:20-30 " {
		t.Errorf("at version 4: %q", got)
	}
}

// Times come back as given: same instant and location (the UI prints them
// with Format, which uses the location), and the zero time stays zero.
func TestIPHistoryTimesKeepTheirLocation(t *testing.T) {
	h := newIPHistory()
	zone := time.FixedZone("X", 3*3600+1800)
	from := time.Date(2026, 11, 29, 17, 24, 5, 123456789, zone)
	to := from.Add(90 * time.Minute)
	h.open("10.1.0.2", nn(ns, "a"), "ua", "", from, 1)
	h.close("10.1.0.2", "ua", to, 2)
	got := h.at("10.1.0.2", 2)
	if len(got) != 1 || got[0].To == nil {
		t.Fatalf("history %+v", got)
	}
	if got[0].From != from || *got[0].To != to {
		t.Errorf("from %v to %v, want %v to %v", got[0].From, *got[0].To, from, to)
	}
	h.open("10.1.0.3", nn(ns, "z"), "uz", "", time.Time{}, 3)
	if got := h.at("10.1.0.3", 3); len(got) != 1 || !got[0].From.IsZero() {
		t.Errorf("zero start came back as %+v", got)
	}
}

// The per-IP cap drops the oldest holding, which is the inline one: the next
// oldest takes its place, and versions still filter correctly.
func TestIPHistoryPerIPCapShiftsInline(t *testing.T) {
	h := newIPHistory()
	const ip = "10.1.0.4"
	const n = ipHistoryPerIP + 4
	h.open(ip, nn(ns, "long"), "long", "", ft0, 1) // held throughout
	for i := 1; i < n; i++ {
		uid := fmt.Sprint("u", i)
		h.open(ip, nn(ns, uid), uid, "", ft0.Add(time.Duration(i)*time.Second), uint64(2*i))
		h.close(ip, uid, ft0.Add(time.Duration(i)*time.Second+time.Millisecond), uint64(2*i+1))
	}
	got := h.at(ip, 1000)
	if len(got) != ipHistoryPerIP {
		t.Fatalf("kept %d holdings, want %d", len(got), ipHistoryPerIP)
	}
	for j, hd := range got {
		if want := fmt.Sprint("u", n-ipHistoryPerIP+j); hd.UID != want {
			t.Fatalf("holding %d is %s, want %s (oldest first, oldest dropped): %s", j, hd.UID, want, holdingsStr(got))
		}
	}
	// A Snapshot from before the newest opens sees only the kept holdings
	// that existed then.
	if got := h.at(ip, uint64(2*(n-1)-1)); len(got) != ipHistoryPerIP-1 || got[len(got)-1].UID != fmt.Sprint("u", n-2) {
		t.Errorf("at an earlier version: %s", holdingsStr(got))
	}
	// "long" fell off while held; the IP is still held by nobody now, so it
	// ages out normally.
	h.prune(ft0.Add(time.Duration(n)*time.Second + ipHistoryRetention))
	if h.at(ip, 1000) != nil {
		t.Error("an IP whose holders all let go survived the retention period")
	}
}

// An IP let go, taken again and let go again is forgotten a retention period
// after the last time, not the first (its first queue entry is stale).
func TestIPHistoryReusedIPAgesFromLastRelease(t *testing.T) {
	h := newIPHistory()
	const ip = "10.1.0.5"
	h.open(ip, nn(ns, "a"), "ua", "", ft0, 1)
	h.close(ip, "ua", ft0.Add(time.Hour), 2)
	h.open(ip, nn(ns, "b"), "ub", "", ft0.Add(2*time.Hour), 3)
	h.close(ip, "ub", ft0.Add(3*time.Hour), 4)
	h.open("10.1.0.6", nn(ns, "c"), "uc", "", ft0, 5) // held: never ages out
	h.prune(ft0.Add(time.Hour + ipHistoryRetention + time.Minute))
	if len(h.at(ip, 9)) != 2 {
		t.Fatal("forgotten a retention period after its first release, not its last")
	}
	h.prune(ft0.Add(3*time.Hour + ipHistoryRetention))
	if h.at(ip, 9) != nil {
		t.Error("not forgotten a retention period after its last release")
	}
	if len(h.at("10.1.0.6", 9)) != 1 {
		t.Error("a held IP was forgotten")
	}
	// Taken again after the release and still held: never forgotten.
	h.open(ip, nn(ns, "d"), "ud", "", ft0.Add(4*time.Hour), 6)
	h.close(ip, "ud", ft0.Add(5*time.Hour), 7)
	h.open(ip, nn(ns, "e"), "ue", "", ft0.Add(6*time.Hour), 8)
	h.prune(ft0.Add(100 * time.Hour))
	if len(h.at(ip, 9)) != 2 {
		t.Error("an IP held again was forgotten for its earlier release")
	}
	if len(h.unheld) != 0 {
		t.Errorf("%d queue entries left for IPs all held", len(h.unheld))
	}
}

// One IP reused over and over must not grow the queue of unheld IPs.
func TestIPHistoryQueueBoundedUnderReuse(t *testing.T) {
	h := newIPHistory()
	at := ft0
	for i := range 10000 {
		uid := fmt.Sprint(i)
		ip := fmt.Sprint("10.1.1.", i%3)
		h.open(ip, nn(ns, "p"), uid, "", at, uint64(2*i+1))
		at = at.Add(time.Millisecond)
		h.close(ip, uid, at, uint64(2*i+2))
	}
	if n := len(h.unheld); n > 2*h.len()+64 {
		t.Errorf("%d queue entries for %d IPs", n, h.len())
	}
	h.prune(at.Add(ipHistoryRetention))
	if h.len() != 0 || len(h.unheld) != 0 {
		t.Errorf("%d IPs, %d queue entries left after the retention period", h.len(), len(h.unheld))
	}
}

// Over the cap, the IPs let go longest ago go first; when every IP is held,
// some held IP goes, never the one just added.
func TestIPHistoryMaxIPs(t *testing.T) {
	h := newIPHistory()
	h.maxIPs = 4
	at := ft0
	open := func(ip string) {
		at = at.Add(time.Second)
		h.open(ip, nn(ns, ip), ip, "", at, 1)
	}
	closeIP := func(ip string) {
		at = at.Add(time.Second)
		h.close(ip, ip, at, 2)
	}
	for _, ip := range []string{"a", "b", "c", "d"} {
		open(ip)
	}
	closeIP("c")
	closeIP("a")
	open("e") // over the cap: c, let go first, goes
	if h.len() != 4 || h.at("c", 9) != nil || h.at("a", 9) == nil {
		t.Fatalf("after e: %d IPs, c %v, a %v", h.len(), h.at("c", 9), h.at("a", 9))
	}
	open("f") // then a
	if h.len() != 4 || h.at("a", 9) != nil {
		t.Fatalf("after f: %d IPs, a %v", h.len(), h.at("a", 9))
	}
	open("g") // all held (b d e f): one of them goes, not g
	if h.len() != 4 || h.at("g", 9) == nil {
		t.Fatalf("after g: %d IPs, g %v", h.len(), h.at("g", 9))
	}
}

// An IP's node holds its history, its live Pods and the sandboxes recording
// it: each part comes and goes on its own, several Pods or sandboxes under
// one IP are listed in the order they came, and the node goes once all three
// are empty.
func TestIPNodeParts(t *testing.T) {
	h := newIPHistory()
	h.maxIPs = 1
	pa, pb := &podEntry{key: "ns/a"}, &podEntry{key: "ns/b"}
	ea, eb := &sbEntry{key: "bsbx/ns/a"}, &sbEntry{key: "bsbx/ns/b"}
	const ip = "10.1.2.1"
	h.addLive(ip, pa)
	h.addWatch(ip, ea)
	h.open(ip, pa.key, "ua", ea.key, ft0, 1)
	h.open("10.1.2.2", "ns/c", "uc", "", ft0, 2) // over the cap: ip's history goes, its Pod and sandbox stay
	if h.at(ip, 9) != nil || !h.hasLive(ip) || !slices.Equal(slices.Collect(h.watchers(ip)), []*sbEntry{ea}) {
		t.Fatalf("after the cap: history %v, live %v, watchers %v", h.at(ip, 9), h.hasLive(ip), slices.Collect(h.watchers(ip)))
	}
	h.close(ip, "ua", ft0.Add(time.Second), 3) // nothing recorded: nothing to close
	if h.at(ip, 9) != nil || h.len() != 1 {
		t.Fatalf("a close recorded a forgotten IP: %v, %d IPs", h.at(ip, 9), h.len())
	}

	h.addLive(ip, pb)
	h.addLive(ip, pa) // once
	h.addWatch(ip, eb)
	if got := slices.Collect(h.liveAt(ip)); !slices.Equal(got, []*podEntry{pa, pb}) {
		t.Errorf("live %v", got)
	}
	if got := slices.Collect(h.watchers(ip)); !slices.Equal(got, []*sbEntry{ea, eb}) {
		t.Errorf("watchers %v", got)
	}
	if h.liveKeys() != 1 || h.watchKeys() != 1 {
		t.Errorf("%d live IPs, %d watched IPs", h.liveKeys(), h.watchKeys())
	}
	h.removeLive(ip, pa)
	h.removeWatch(ip, ea)
	h.removeWatch(ip, ea) // once more: nothing
	if got := slices.Collect(h.liveAt(ip)); !slices.Equal(got, []*podEntry{pb}) || len(h.liveMany) != 0 {
		t.Errorf("live after a removal %v (%d lists)", got, len(h.liveMany))
	}
	h.removeLive(ip, pb)
	if h.hasLive(ip) || h.ips[ip] == nil {
		t.Fatalf("live %v, node %v: the sandbox recording the IP still needs the node", h.hasLive(ip), h.ips[ip])
	}
	h.removeWatch(ip, eb)
	if h.ips[ip] != nil || len(h.ips) != 1 || len(h.watchMany) != 0 {
		t.Errorf("an empty node stays: %d nodes", len(h.ips))
	}
	// A live Pod keeps the node of an IP whose history ages out.
	h.removeLive("10.1.2.2", pa) // not among its Pods: nothing
	h.addLive("10.1.2.2", pa)
	h.close("10.1.2.2", "uc", ft0, 4)
	h.prune(ft0.Add(ipHistoryRetention))
	if h.len() != 0 || !h.hasLive("10.1.2.2") {
		t.Errorf("%d IPs remembered, live %v", h.len(), h.hasLive("10.1.2.2"))
	}
	h.removeLive("10.1.2.2", pa)
	if len(h.ips) != 0 {
		t.Errorf("%d nodes left", len(h.ips))
	}
	// Several live Pods keep the node when its lone sandbox goes.
	h.addLive(ip, pa)
	h.addLive(ip, pb)
	h.addWatch(ip, ea)
	h.removeWatch(ip, ea)
	h.removeLive(ip, pa)
	h.removeLive(ip, pb)
	if h.hasLive(ip) || len(h.ips) != 0 || len(h.liveMany) != 0 {
		t.Errorf("live %v, %d nodes, %d lists left", h.hasLive(ip), len(h.ips), len(h.liveMany))
	}
}

// The map of nodes is made anew once most IPs are gone: a Go map keeps the
// room of deleted entries.
func TestIPNodesShrink(t *testing.T) {
	h := newIPHistory()
	e := &sbEntry{key: "bsbx/ns/a"}
	const n = 4 * minShrink
	for i := range n {
		h.addWatch(fmt.Sprint("10.2.", i/256, ".", i%256), e)
	}
	for i := range n - 10 {
		h.removeWatch(fmt.Sprint("10.2.", i/256, ".", i%256), e)
	}
	if len(h.ips) != 10 || h.peak >= n {
		t.Errorf("%d nodes, peak %d: not made anew", len(h.ips), h.peak)
	}
}
