package tmuxtest

import "testing"

func TestParsePane(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		out  string
		want paneState
	}{
		{"0 status= signal= pid=7", paneState{}},
		{"1 status=4 signal= pid=7", paneState{dead: true, statusKnown: true, status: 4, pid: 7}},
		{"1 status=0 signal= pid=7\n", paneState{dead: true, statusKnown: true, status: 0, pid: 7}},
		{"1 status= signal=2 pid=7", paneState{dead: true, statusKnown: true, status: 130, pid: 7}},
		// Dead, but tmux has not reaped the process: the status is unknown.
		{"1 status= signal= pid=7", paneState{dead: true, pid: 7}},
		{"", paneState{}},
	} {
		if got := parsePane(tc.out); got != tc.want {
			t.Errorf("parsePane(%q) = %+v, want %+v", tc.out, got, tc.want)
		}
	}
}

func TestZombieStatus(t *testing.T) {
	t.Parallel()
	// Fields after the command name, trimmed to what matters: the state and,
	// last, the waitpid status (exit 3 = 768; SIGINT = 2; exit 0 = 0).
	for _, tc := range []struct {
		stat       string
		exited     bool
		wantStatus int
	}{
		{"324 (sandscope) Z 323 324 0 768", true, 3},
		{"324 (odd name) with) Z 323 324 0 2", true, 130},
		{"324 (sh) Z 323 324 0 0", true, 0},
		{"324 (sh) S 323 324 0 0", false, 0},
		{"garbage", false, 0},
	} {
		exited, status := zombieStatus(tc.stat)
		if exited != tc.exited || status != tc.wantStatus {
			t.Errorf("zombieStatus(%q) = %v, %d; want %v, %d", tc.stat, exited, status, tc.exited, tc.wantStatus)
		}
	}
}
