package mem

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"unsafe"
)

func TestStringListsShareEqualLists(t *testing.T) {
	s := NewStringLists()
	a := s.Share([]string{"/opt/execd/bootstrap.sh", "tail", "-f", "/dev/null"})
	in := []string{strings.Clone("/opt/execd/bootstrap.sh"), "tail", "-f", "/dev/null"}
	b := s.Share(in)
	if unsafe.SliceData(a) != unsafe.SliceData(b) {
		t.Fatal("equal lists got separate arrays")
	}
	if unsafe.SliceData(b) == unsafe.SliceData(in) {
		t.Fatal("the caller's slice was kept")
	}
	// Lists that differ anywhere, or only in where one element ends, stay apart.
	for _, other := range [][]string{{"/opt/execd/bootstrap.sh", "tail", "-f"}, {"/opt/execd/bootstrap.sh", "tail", "-f", "/dev/zero"},
		{"/opt/execd/bootstrap.shtail", "-f", "/dev/null"}, {}} {
		got := s.Share(other)
		if unsafe.SliceData(got) == unsafe.SliceData(a) || strings.Join(got, "|") != strings.Join(other, "|") {
			t.Errorf("Share(%q) = %q", other, got)
		}
	}
	if s.Share(nil) != nil || s.Share([]string{}) == nil {
		t.Error("nil must stay nil and empty stay empty")
	}
	var none *StringLists
	if c := none.Share(in); unsafe.SliceData(c) == unsafe.SliceData(in) || strings.Join(c, " ") != strings.Join(in, " ") {
		t.Errorf("a nil table must copy: %q", c)
	}
}

// A fleet whose commands differ per sandbox must not grow the table without end.
func TestStringListsBounded(t *testing.T) {
	s := NewStringLists()
	for i := range maxSharedLists + 100 {
		if got := s.Share([]string{"run", fmt.Sprint(i)}); got[1] != fmt.Sprint(i) {
			t.Fatalf("list %d came back as %q", i, got)
		}
	}
	if s.n != maxSharedLists {
		t.Errorf("%d lists kept, want the bound %d", s.n, maxSharedLists)
	}
}

func TestStringListsConcurrent(t *testing.T) {
	s := NewStringLists()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 500 {
				l := s.Share([]string{"cmd", fmt.Sprint(i % 50)})
				if l[1] != fmt.Sprint(i%50) {
					t.Errorf("goroutine %d: %q", g, l)
				}
			}
		})
	}
	wg.Wait()
	if s.n != 50 {
		t.Errorf("%d lists, want 50", s.n)
	}
}
