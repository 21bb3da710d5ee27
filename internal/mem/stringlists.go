package mem

import (
	"hash/maphash"
	"slices"
	"sync"
)

// maxSharedLists bounds a StringLists: a fleet has a handful of distinct
// commands and finalizer lists, but one whose commands differ per sandbox
// (an ID in the arguments) must not grow the table without end.
const maxSharedLists = 4096

// StringLists shares equal string lists among the objects that carry them.
// Every Pod of a template repeats its container's command and args, every
// BatchSandbox its template's command and its finalizers: tens of thousands
// of equal small slices. A shared list is read only, like everything the
// fleet keeps.
//
// Safe for concurrent use (the Pod and BatchSandbox informers decode at the
// same time). The zero value is not usable; a nil *StringLists copies
// instead of sharing.
type StringLists struct {
	seed  maphash.Seed
	mu    sync.Mutex
	lists map[uint64][]*[]string // by hash of the elements; collisions compared
	n     int
}

// NewStringLists returns an empty table.
func NewStringLists() *StringLists {
	return &StringLists{seed: maphash.MakeSeed(), lists: make(map[uint64][]*[]string)}
}

// Share returns a list equal to ss with its elements interned: the one
// handed out before for an equal list, or a new one that later calls will
// share. ss itself is never kept (it may belong to a decoder's caller).
// nil in, nil out; an empty list comes back empty, not nil.
func (s *StringLists) Share(ss []string) []string {
	if ss == nil {
		return nil
	}
	return *s.ShareRef(ss)
}

// ShareRef is Share for a holder that keeps a pointer to the list (a word
// where the list itself is three): equal lists get the same pointer. nil
// in, nil out.
func (s *StringLists) ShareRef(ss []string) *[]string {
	if ss == nil {
		return nil
	}
	if s == nil {
		out := InternAll(ss)
		return &out
	}
	var h maphash.Hash
	h.SetSeed(s.seed)
	for _, e := range ss {
		h.WriteString(e)
		h.WriteByte(0)
	}
	sum := h.Sum64()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.lists[sum] {
		if slices.Equal(*l, ss) {
			return l
		}
	}
	out := InternAll(ss)
	if s.n < maxSharedLists {
		s.lists[sum] = append(s.lists[sum], &out)
		s.n++
	}
	return &out
}
