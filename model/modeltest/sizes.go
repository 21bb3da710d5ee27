package modeltest

import "testing"

// SizeClass is a struct's size and the allocator size class it is to fit
// (runtime/sizeclasses.go: ... 96, 112, 128, 144, ..., 240, 256, 288, 320,
// 352, 384, 416 ...). The allocator rounds every object up to its class, so
// a field that pushes a struct over costs every object of it the difference.
type SizeClass struct {
	Name        string
	Size, Class uintptr
}

// FitSizeClasses fails t for each struct that no longer fits its class.
func FitSizeClasses(t testing.TB, structs ...SizeClass) {
	t.Helper()
	for _, c := range structs {
		if c.Size > c.Class {
			t.Errorf("%s is %d bytes: it no longer fits the %d-byte size class it is allocated in; "+
				"put a field most objects leave empty in a rare part", c.Name, c.Size, c.Class)
		}
	}
}
