package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
)

// A discovery whose answer was lost on the way (the server cut the
// connection mid-body, as client-go words it) or that the server failed
// for a while is asked again; one that nothing listens for, or that the
// server refused, ends at once with its own error.
func TestDiscoveryRetriesOnlyWhatASecondTryMayMend(t *testing.T) {
	quick := wait.Backoff{Duration: time.Millisecond, Factor: 1, Steps: 4}
	cutBody := fmt.Errorf("discovering API groups: %w",
		fmt.Errorf("unexpected error when reading response body. Please retry. Original error: %w", io.ErrUnexpectedEOF))
	refused := fmt.Errorf("discovering API groups: %w", &url.Error{Op: "Get", URL: "https://127.0.0.1:1/api",
		Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}})
	forbidden := apierrors.NewForbidden(schema.GroupResource{}, "", errors.New("no"))
	for _, tc := range []struct {
		name      string
		errs      []error // one per try; then success
		wantCalls int
		wantErr   error
	}{
		{"a cut answer, then one", []error{cutBody}, 2, nil},
		{"overloaded twice, then an answer", []error{apierrors.NewTooManyRequests("busy", 1), apierrors.NewServiceUnavailable("etcd")}, 3, nil},
		{"refused", []error{refused}, 1, refused},
		{"forbidden", []error{forbidden}, 1, forbidden},
		{"cut every time", []error{cutBody, cutBody, cutBody, cutBody, cutBody}, 4, cutBody},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			found, err := discoverRetrying(context.Background(), quick, func(context.Context) (Sources, error) {
				calls++
				if calls <= len(tc.errs) {
					return Sources{}, tc.errs[calls-1]
				}
				return Sources{Notes: []string{"found"}}, nil
			})
			if calls != tc.wantCalls {
				t.Errorf("%d tries, want %d", calls, tc.wantCalls)
			}
			if tc.wantErr == nil && (err != nil || len(found.Notes) != 1) {
				t.Errorf("err %v, sources %+v; want the sources found", err, found)
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("err %v, want %v", err, tc.wantErr)
			}
		})
	}
}
