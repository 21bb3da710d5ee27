package sim

import (
	"fmt"
	"net/netip"
)

// ipam hands out Pod IPs per node from a small range, the way a CNI with a
// small per-node block (as Calico's IPAM) does: the address freed
// last is the one handed out next, so a dead Pod's IP goes to the next Pod
// on that node within seconds.
type ipam struct {
	nodes  []nodeBlock
	base   uint32
	stride int
}

type nodeBlock struct {
	free []netip.Addr // stack: the last freed address is on top
	used map[netip.Addr]bool
}

// newIPAM gives node i the addresses base + i*stride + 2 ... (+size), where
// stride is at least 256 so that the demo reads "10.244.<node>.<n>".
func newIPAM(base netip.Addr, nodes, size int) (*ipam, error) {
	if !base.Is4() {
		return nil, fmt.Errorf("pod CIDR base %s: only IPv4 is simulated", base)
	}
	stride := 256
	for stride < size+2 {
		stride *= 2
	}
	b := base.As4()
	start := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	a := &ipam{nodes: make([]nodeBlock, nodes), base: start, stride: stride}
	for i := range a.nodes {
		blk := &a.nodes[i]
		blk.used = make(map[netip.Addr]bool, size)
		first := start + uint32(i*stride) + 2
		// Push in reverse so the lowest address is handed out first.
		for k := size - 1; k >= 0; k-- {
			v := first + uint32(k)
			blk.free = append(blk.free, addrOf(v))
		}
	}
	return a, nil
}

// allocate returns a free IP of node n, or "" when its block is exhausted
// (the Pod then stays Pending, as on a real node).
func (a *ipam) allocate(n int) string {
	blk := &a.nodes[n]
	if len(blk.free) == 0 {
		return ""
	}
	ip := blk.free[len(blk.free)-1]
	blk.free = blk.free[:len(blk.free)-1]
	blk.used[ip] = true
	return ip.String()
}

// release returns ip to node n's block; unknown or already free addresses are ignored.
func (a *ipam) release(n int, ip string) {
	if blk, addr, ok := a.unhold(n, ip); ok {
		blk.free = append(blk.free, addr)
	}
}

// unhold marks ip no longer used in node n's block, for the caller to put
// back on the free stack; false for an unknown or already free address.
func (a *ipam) unhold(n int, ip string) (*nodeBlock, netip.Addr, bool) {
	addr, err := netip.ParseAddr(ip)
	if err != nil || n < 0 || n >= len(a.nodes) {
		return nil, netip.Addr{}, false
	}
	blk := &a.nodes[n]
	if !blk.used[addr] {
		return nil, netip.Addr{}, false
	}
	delete(blk.used, addr)
	return blk, addr, true
}

// available is the number of free addresses on node n.
func (a *ipam) available(n int) int { return len(a.nodes[n].free) }

func addrOf(v uint32) netip.Addr {
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// first is the first address of node n's range (its network address).
func (a *ipam) first(n int) string { return addrOf(a.base + uint32(n*a.stride)).String() }

// releaseLast returns ip to node n's block behind every other free address:
// it is handed out again only when the block runs low. Used where an address
// must stay unheld for a while (a gone Pod whose IP nobody took yet).
func (a *ipam) releaseLast(n int, ip string) {
	if blk, addr, ok := a.unhold(n, ip); ok {
		blk.free = append([]netip.Addr{addr}, blk.free...)
	}
}

// freeIP returns a Pod's address to its node once: the Pod forgets it, so
// a later release (its sandbox's teardown after its container died) cannot
// free the address again while another Pod holds it.
func (s *Sim) freeIP(p *simPod) {
	s.ipam.release(p.node, p.ip)
	p.ip = ""
}
