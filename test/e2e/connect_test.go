package e2e_test

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// While it connects, the TUI says to what, not a blank screen (the one-line
// error that follows is cli's TestConnectFailuresAreOneLine).
func TestTUISaysWhatItConnectsTo(t *testing.T) {
	needTmux(t)
	// A server that accepts connections and never answers.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	server := "https://" + l.Addr().String()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	data := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters: [{name: slow, cluster: {server: %q, insecure-skip-tls-verify: true}}]\n"+
		"users: [{name: u, user: {token: t}}]\ncontexts: [{name: slow-ctx, context: {cluster: slow, user: u}}]\ncurrent-context: slow-ctx\n", server)
	if err := os.WriteFile(kubeconfig, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startSandscope(t, 120, 10, "--kubeconfig", kubeconfig, "--request-timeout", "10s")
	s.WaitForRegexp(regexp.MustCompile(regexp.QuoteMeta("connecting to "+server+" (context slow-ctx)")), 10*time.Second)
}
