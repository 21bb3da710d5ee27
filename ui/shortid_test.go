package ui

import "testing"

func TestShortIDs(t *testing.T) {
	for in, want := range map[string]string{
		"16952042-4659-404b-af6a-1ad692ff3444":          "16952042",
		"16952042-4659-404b-af6a-1ad692ff3444-0":        "16952042-0",
		"IP_TAKEN→02a7975b-63d1-4e58-a71d-9fc6e66a766c": "IP_TAKEN→02a7975b",
		"agent-29d2711e": "agent-29d2711e",
		"sandbox-16952042-4659-404b-af6a-1ad692ff3444":                                  "sandbox-16952042",
		"a16952042-4659-404b-af6a-1ad692ff3444":                                         "a16952042-4659-404b-af6a-1ad692ff3444", // hex before: not a whole UUID
		"16952042-4659-404b-af6a-1ad692ff3444 and 02a7975b-63d1-4e58-a71d-9fc6e66a766c": "16952042 and 02a7975b",
	} {
		if got := shortIDs(in); got != want {
			t.Errorf("shortIDs(%q) = %q, want %q", in, got, want)
		}
	}
}
