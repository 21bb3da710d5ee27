package execute

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// A fan-out line's error lists its evidence, empty or not, as the one-target
// error does: a program reading the lines never meets "evidence":null.
func TestFanOutLineErrorEvidenceIsAList(t *testing.T) {
	b, err := json.Marshal(Line{Sandbox: "bsbx/ns/a", Error: lineError(errors.New("connection reset"))})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"evidence":[]`) {
		t.Errorf("line %s: want the error's evidence as []", b)
	}
}
