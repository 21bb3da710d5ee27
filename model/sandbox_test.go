package model

import "testing"

// The accessors read a row without Meta (built by hand, no source) as empty.
func TestSandboxWithoutMetaReadsEmpty(t *testing.T) {
	sb := &Sandbox{Key: "bsbx/ns/x"}
	if sb.Namespace() != "" || sb.Name() != "" || sb.UID() != "" || !sb.Labels().IsZero() ||
		!sb.CreatedAt().IsZero() || sb.DeletingSince() != nil || sb.Finalizers() != nil {
		t.Errorf("a row without Meta reads %q %q %q %v %v %v %v", sb.Namespace(), sb.Name(), sb.UID(),
			sb.Labels(), sb.CreatedAt(), sb.DeletingSince(), sb.Finalizers())
	}
}
