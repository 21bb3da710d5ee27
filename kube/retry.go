package kube

import (
	"context"
	"errors"
	"io"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
)

// AnswerLost reports whether err is an API server's answer lost on the way
// (the connection cut in the middle of it: a server restarting, a VPN's
// hiccup) or a failure the server says is passing (overloaded, timed out,
// failing), as opposed to a refusal, a malformed answer or nothing
// listening: a second try may get the answer.
func AnswerLost(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || utilnet.IsProbableEOF(err) ||
		utilnet.IsConnectionReset(err) || apierrors.IsTooManyRequests(err) || apierrors.IsServerTimeout(err) ||
		apierrors.IsTimeout(err) || apierrors.IsInternalError(err) || apierrors.IsServiceUnavailable(err) ||
		apierrors.IsUnexpectedServerError(err)
}

// RetryLostAnswers runs call, again after backoff while retry says its
// error may pass, and not past ctx. It returns nil, or the last try's own
// error (not "timed out waiting"), or ctx's when no try ran.
func RetryLostAnswers(ctx context.Context, backoff wait.Backoff, retry func(error) bool, call func(context.Context) error) error {
	var last error
	err := wait.ExponentialBackoffWithContext(ctx, backoff, func(ctx context.Context) (bool, error) {
		last = call(ctx)
		switch {
		case last == nil:
			return true, nil
		case retry(last):
			return false, nil
		default:
			return false, last
		}
	})
	if err != nil && last != nil {
		return last
	}
	return err
}
