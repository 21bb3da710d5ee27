package codec

import "github.com/sandscope/sandscope/internal/mem"

// internCache stands before mem.InternBytes for the strings of one stream
// (a watch, a list): a fleet's Pods repeat a few hundred of them (node
// names, images, owner kinds, phases, condition types), a dozen a Pod, and
// a lookup in a small map of the stream's own costs less than one in
// unique's table, which every goroutine of the process shares. It holds at
// most internCacheMax strings, all interned already, so it keeps alive
// nothing the fleet would not; once full it starts again empty, so a stream
// of ever new strings costs a clear per internCacheMax of them.
//
// One stream decodes on one goroutine: the cache is not safe for
// concurrent use. A nil cache interns directly.
type internCache struct {
	m map[string]string
}

// internCacheMax bounds an internCache: about 200 KB of map at most.
const internCacheMax = 4096

// bytes is mem.InternBytes(b) through the cache.
func (c *internCache) bytes(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if c == nil {
		return mem.InternBytes(b)
	}
	if s, ok := c.m[string(b)]; ok { // a lookup by b's bytes: no string is made
		return s
	}
	s := mem.InternBytes(b)
	if c.m == nil {
		c.m = make(map[string]string)
	} else if len(c.m) >= internCacheMax {
		clear(c.m)
	}
	c.m[s] = s
	return s
}
