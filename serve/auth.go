package serve

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/client-go/kubernetes"
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
type apiServerAuth struct {
	authn authenticator.Request
	authz authorizer.Authorizer
	log   io.Writer
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
	authn, _, err := authenticatorfactory.DelegatingAuthenticatorConfig{
		Anonymous:                &apiserver.AnonymousAuthConfig{Enabled: false},
		TokenAccessReviewClient:  kube.AuthenticationV1(),
		TokenAccessReviewTimeout: reviewTimeout,
		WebhookRetryBackoff:      &reviewBackoff,
		CacheTTL:                 authnCacheTTL,
	}.New()
	if err != nil {
		return nil, fmt.Errorf("token reviews: %w", err)
	}
	authz, err := authorizerfactory.DelegatingAuthorizerConfig{
		SubjectAccessReviewClient: kube.AuthorizationV1(),
		AllowCacheTTL:             authzAllowCacheTTL,
		DenyCacheTTL:              authzDenyCacheTTL,
		WebhookRetryBackoff:       &reviewBackoff,
	}.New()
	if err != nil {
		return nil, fmt.Errorf("subject access reviews: %w", err)
	}
	return &apiServerAuth{
		authn: authn, authz: authz, log: log,
		unauthenticated: rate.Sometimes{Interval: time.Minute},
		denied:          rate.Sometimes{Interval: time.Minute},
		failed:          rate.Sometimes{Interval: time.Minute},
	}, nil
}

// protect answers 401 to a request without a token the API server accepts,
// 403 to a user not allowed `get` on the path, and passes the rest to h.
// Only GET and HEAD reach it (the mux's patterns), so the verb is `get`.
func (a *apiServerAuth) protect(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, ok, err := a.authn.AuthenticateRequest(r)
		if err != nil || !ok {
			if err != nil {
				a.logSometimes(&a.unauthenticated, "sandscope serve: refused %s %s: authentication: %v", r.Method, r.URL.Path, err)
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="sandscope"`)
			http.Error(w, "Unauthorized: a bearer token the API server accepts is required", http.StatusUnauthorized)
			return
		}
		attrs := authorizer.AttributesRecord{User: res.User, Verb: "get", Path: r.URL.Path, ResourceRequest: false}
		decision, reason, err := a.authz.Authorize(r.Context(), attrs)
		switch {
		case err != nil:
			a.logSometimes(&a.failed, "sandscope serve: refused %s %s to %q: authorization: %v", r.Method, r.URL.Path, res.User.GetName(), err)
			http.Error(w, "cannot check authorization with the API server", http.StatusInternalServerError)
		case decision != authorizer.DecisionAllow:
			if reason != "" {
				reason = " (" + reason + ")"
			}
			a.logSometimes(&a.denied, "sandscope serve: refused %s %s: %q may not get the non-resource URL %s%s",
				r.Method, r.URL.Path, res.User.GetName(), r.URL.Path, reason)
			http.Error(w, fmt.Sprintf("Forbidden: %q may not get %s", res.User.GetName(), r.URL.Path), http.StatusForbidden)
		default:
			h.ServeHTTP(w, r)
		}
	})
}

func (a *apiServerAuth) logSometimes(every *rate.Sometimes, format string, args ...any) {
	every.Do(func() { fmt.Fprintf(a.log, format+"\n", args...) })
}
