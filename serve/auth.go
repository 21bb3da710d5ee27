package serve

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"
)

// The caches and time limits of the delegated checks: those of
// controller-runtime's metrics filters. A scraper's token is reviewed once a
// minute, not once a scrape; a denial is asked again after 30 s, so a grant
// just made takes effect quickly.
const (
	authnCacheTTL      = time.Minute
	authzAllowCacheTTL = 5 * time.Minute
	authzDenyCacheTTL  = 30 * time.Second
	reviewTimeout      = 10 * time.Second
)

// reviewBackoff retries a TokenReview or SubjectAccessReview the API server
// failed to answer, within the scrape's time.
var reviewBackoff = wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}

// apiServerAuth lets a request in when the API server says so: the bearer
// token is checked with a TokenReview, and the user it names must be allowed
// `get` on the request's path (a non-resource URL, /metrics or /findings)
// by a SubjectAccessReview, as kube-rbac-proxy and controller-runtime's
// metrics filters do. Both answers are cached.
//
// The two reviews are asked through client-go directly rather than through
// k8s.io/apiserver's delegating authenticator and authorizer: those link
// the API server's webhook stack (CEL, gRPC, OpenTelemetry, audit) into
// every sandscope command, which doubled the binary and added about 20 MB
// to the RSS of the TUI (docs/design.md, "The exporter asks the API server
// who may read it").
type apiServerAuth struct {
	tokens *tokenReviewer
	access *accessReviewer
	log    io.Writer
	// A flood of bad requests must not flood the log: one line a minute for
	// each kind of refusal says why requests are being refused.
	unauthenticated, denied, failed rate.Sometimes
}

// newAPIServerAuth builds the delegated checks over kube, which must be
// allowed to create tokenreviews and subjectaccessreviews
// (deploy/clusterrolebinding-auth.yaml binds system:auth-delegator).
func newAPIServerAuth(kube kubernetes.Interface, log io.Writer) (*apiServerAuth, error) {
	if kube == nil {
		return nil, errors.New("no API server to check requests with")
	}
	return &apiServerAuth{
		tokens:          newTokenReviewer(kube.AuthenticationV1().TokenReviews(), clock.RealClock{}, authnCacheTTL, reviewTimeout, reviewBackoff),
		access:          newAccessReviewer(kube.AuthorizationV1().SubjectAccessReviews(), clock.RealClock{}, authzAllowCacheTTL, authzDenyCacheTTL, reviewTimeout, reviewBackoff),
		log:             log,
		unauthenticated: rate.Sometimes{Interval: time.Minute},
		denied:          rate.Sometimes{Interval: time.Minute},
		failed:          rate.Sometimes{Interval: time.Minute},
	}, nil
}

// protect answers 401 to a request without a token the API server accepts,
// 403 to a user not allowed `get` on the path, 500 when the API server
// could not answer either question, and passes the rest to h. Only GET and
// HEAD reach it (the mux's patterns), so the verb is `get`.
func (a *apiServerAuth) protect(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, ok, err := a.authenticate(r)
		if err != nil || !ok {
			if err != nil {
				a.logSometimes(&a.unauthenticated, "sandscope serve: refused %s %s: authentication: %v", r.Method, r.URL.Path, err)
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="sandscope"`)
			http.Error(w, "Unauthorized: a bearer token the API server accepts is required", http.StatusUnauthorized)
			return
		}
		allowed, reason, err := a.access.mayGet(r.Context(), user, r.URL.Path)
		switch {
		case err != nil:
			a.logSometimes(&a.failed, "sandscope serve: refused %s %s to %q: authorization: %v", r.Method, r.URL.Path, user.Name, err)
			http.Error(w, "cannot check authorization with the API server", http.StatusInternalServerError)
		case !allowed:
			if reason != "" {
				reason = " (" + reason + ")"
			}
			a.logSometimes(&a.denied, "sandscope serve: refused %s %s: %q may not get the non-resource URL %s%s",
				r.Method, r.URL.Path, user.Name, r.URL.Path, reason)
			http.Error(w, fmt.Sprintf("Forbidden: %q may not get %s", user.Name, r.URL.Path), http.StatusForbidden)
		default:
			h.ServeHTTP(w, r)
		}
	})
}

// authenticate is who r's bearer token belongs to; ok is false without a
// token or with one the API server does not accept.
func (a *apiServerAuth) authenticate(r *http.Request) (reviewedUser, bool, error) {
	token, err := bearerToken(r)
	if err != nil {
		return reviewedUser{}, false, nil
	}
	return a.tokens.review(r.Context(), token)
}

func (a *apiServerAuth) logSometimes(every *rate.Sometimes, format string, args ...any) {
	every.Do(func() { fmt.Fprintf(a.log, format+"\n", args...) })
}
