package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"
)

// quickBackoff retries at once: these tests count requests, not time.
var quickBackoff = wait.Backoff{Duration: time.Millisecond, Factor: 1, Steps: 3}

// reviewServer is a fake API server's review endpoints: tokens it knows,
// what it allows, and how many reviews it was asked.
type reviewServer struct {
	kube          *fake.Clientset
	tokenReviews  atomic.Int32
	accessReviews atomic.Int32
	failNext      atomic.Int32 // answer this many next reviews 503
	allow         map[string]bool
}

func newReviewServer(allow map[string]bool) *reviewServer {
	s := &reviewServer{kube: fake.NewClientset(), allow: allow}
	s.kube.PrependReactor("create", "tokenreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		s.tokenReviews.Add(1)
		if s.failNext.Add(-1) >= 0 {
			return true, nil, apierrors.NewServiceUnavailable("etcd is away")
		}
		tr := a.(k8stesting.CreateAction).GetObject().(*authenticationv1.TokenReview)
		if tr.Spec.Token == "reader-token" {
			tr.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{
				Username: "system:serviceaccount:mon:reader", Groups: []string{"system:serviceaccounts"},
				Extra: map[string]authenticationv1.ExtraValue{"scope": {"a"}},
			}}
		}
		return true, tr, nil
	})
	s.kube.PrependReactor("create", "subjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		s.accessReviews.Add(1)
		sar := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SubjectAccessReview)
		sp := sar.Spec
		if sp.NonResourceAttributes == nil || sp.NonResourceAttributes.Verb != "get" || len(sp.Extra["scope"]) != 1 {
			return true, nil, fmt.Errorf("unexpected review %+v", sp)
		}
		sar.Status.Allowed = s.allow[sp.User+" "+sp.NonResourceAttributes.Path]
		if !sar.Status.Allowed {
			sar.Status.Reason = "no RBAC policy matched"
		}
		return true, sar, nil
	})
	return s
}

func (s *reviewServer) auth(clock *clocktesting.FakeClock) *apiServerAuth {
	a, err := newAPIServerAuth(s.kube, &discard{})
	if err != nil {
		panic(err)
	}
	a.tokens = newTokenReviewer(s.kube.AuthenticationV1().TokenReviews(), clock, authnCacheTTL, reviewTimeout, quickBackoff)
	a.access = newAccessReviewer(s.kube.AuthorizationV1().SubjectAccessReviews(), clock, authzAllowCacheTTL, authzDenyCacheTTL, reviewTimeout, quickBackoff)
	return a
}

type discard struct{}

func (*discard) Write(p []byte) (int, error) { return len(p), nil }

func status(h http.Handler, path, authorization string) int {
	r := httptest.NewRequest(http.MethodGet, path, nil)
	if authorization != "" {
		r.Header.Set("Authorization", authorization)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code
}

// The answers a scraper sees, and how often the API server is asked: a
// token once a minute, an allow once in five, a deny once in thirty
// seconds; a review the API server failed to answer is asked again, not
// remembered.
func TestAPIServerAuthAsksAndRemembers(t *testing.T) {
	srv := newReviewServer(map[string]bool{"system:serviceaccount:mon:reader /metrics": true})
	clock := clocktesting.NewFakeClock(time.Now())
	h := srv.auth(clock).protect(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))

	for _, tc := range []struct {
		path, authorization string
		want                int
	}{
		{"/metrics", "", http.StatusUnauthorized},
		{"/metrics", "Bearer ", http.StatusUnauthorized},
		{"/metrics", "Basic cmVhZGVy", http.StatusUnauthorized},
		{"/metrics", "Bearer not-a-token", http.StatusUnauthorized},
		{"/metrics", "Bearer reader-token", http.StatusOK},
		{"/metrics", "bearer reader-token", http.StatusOK},
		{"/findings", "Bearer reader-token", http.StatusForbidden},
	} {
		if got := status(h, tc.path, tc.authorization); got != tc.want {
			t.Errorf("GET %s with %q: %d, want %d", tc.path, tc.authorization, got, tc.want)
		}
	}
	// Two tokens reviewed (one unknown, one known), two paths.
	if n, m := srv.tokenReviews.Load(), srv.accessReviews.Load(); n != 2 || m != 2 {
		t.Fatalf("reviews: %d token, %d access; want 2 and 2 (the rest from the caches)", n, m)
	}

	clock.Step(authzDenyCacheTTL + time.Second)
	status(h, "/metrics", "Bearer reader-token")
	status(h, "/findings", "Bearer reader-token")
	if n, m := srv.tokenReviews.Load(), srv.accessReviews.Load(); n != 2 || m != 3 {
		t.Errorf("after the deny's time: %d token, %d access reviews; want 2 and 3 (only the deny asked again)", n, m)
	}
	clock.Step(authnCacheTTL)
	status(h, "/metrics", "Bearer reader-token")
	if n := srv.tokenReviews.Load(); n != 3 {
		t.Errorf("after the token's time: %d token reviews, want 3", n)
	}

	// The API server fails once, then answers: the retry gets the answer.
	srv.failNext.Store(1)
	if got := status(h, "/metrics", "Bearer another-token"); got != http.StatusUnauthorized {
		t.Errorf("after one failure and an answer: %d, want 401", got)
	}
	if n := srv.tokenReviews.Load(); n != 5 {
		t.Errorf("token reviews %d, want 5 (a failed one retried)", n)
	}
	// It fails every time: 401, and the failure is not remembered.
	srv.failNext.Store(100)
	if got := status(h, "/metrics", "Bearer third-token"); got != http.StatusUnauthorized {
		t.Errorf("API server failing: %d, want 401", got)
	}
	srv.failNext.Store(0)
	before := srv.tokenReviews.Load()
	status(h, "/metrics", "Bearer third-token")
	if n := srv.tokenReviews.Load(); n != before+1 {
		t.Errorf("a failed review was remembered: %d reviews after it, want %d", n, before+1)
	}
}

// A flood of made-up tokens costs at most the cache's bound.
func TestTokenCacheIsBounded(t *testing.T) {
	srv := newReviewServer(nil)
	a := srv.auth(clocktesting.NewFakeClock(time.Now()))
	for i := range reviewCacheSize + 100 {
		if _, ok, err := a.tokens.review(context.Background(), fmt.Sprintf("made-up-%d", i)); ok || err != nil {
			t.Fatalf("token %d: ok %v, err %v", i, ok, err)
		}
	}
	if n := len(a.tokens.answers.Keys()); n > reviewCacheSize {
		t.Errorf("%d answers kept, bound %d", n, reviewCacheSize)
	}
}

// No two different questions share a cache key.
func TestAccessKeyTellsQuestionsApart(t *testing.T) {
	spec := func(user string, groups []string, extra map[string]authorizationv1.ExtraValue, path string) authorizationv1.SubjectAccessReviewSpec {
		return authorizationv1.SubjectAccessReviewSpec{User: user, Groups: groups, Extra: extra,
			NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: path, Verb: "get"}}
	}
	specs := []authorizationv1.SubjectAccessReviewSpec{
		spec("a", nil, nil, "/metrics"),
		spec("a", nil, nil, "/findings"),
		spec("a", []string{"g1,g2"}, nil, "/metrics"),
		spec("a", []string{"g1", "g2"}, nil, "/metrics"),
		spec("a", []string{"g1"}, map[string]authorizationv1.ExtraValue{"k": {"v"}}, "/metrics"),
		spec("a", []string{"g1", "k"}, map[string]authorizationv1.ExtraValue{}, "/metrics"),
		spec("a", nil, map[string]authorizationv1.ExtraValue{"k": {"v", "w"}}, "/metrics"),
		spec("a", nil, map[string]authorizationv1.ExtraValue{"k": {"v"}, "w": nil}, "/metrics"),
		spec("a:/metrics", nil, nil, ""),
		spec("ab", nil, nil, "/metrics"),
	}
	uid := spec("a", nil, nil, "/metrics")
	uid.UID = "b"
	specs = append(specs, uid)
	seen := map[string]int{}
	for i, s := range specs {
		k := accessKey(s)
		if j, ok := seen[k]; ok {
			t.Errorf("specs %d and %d share the key %q", j, i, k)
		}
		seen[k] = i
	}
	if accessKey(spec("a", nil, map[string]authorizationv1.ExtraValue{"x": {"1"}, "y": {"2"}}, "/m")) !=
		accessKey(spec("a", nil, map[string]authorizationv1.ExtraValue{"y": {"2"}, "x": {"1"}}, "/m")) {
		t.Error("the same question built twice has two keys")
	}
}

// A failure that cannot pass (a refusal) is not retried.
func TestWithRetryStopsOnARefusal(t *testing.T) {
	calls := 0
	err := withRetry(context.Background(), quickBackoff, time.Second, func(context.Context) error {
		calls++
		return apierrors.NewForbidden(authorizationv1.Resource("subjectaccessreviews"), "", errors.New("no"))
	})
	if !apierrors.IsForbidden(err) || calls != 1 {
		t.Errorf("err %v after %d calls; want the refusal after 1", err, calls)
	}
	calls = 0
	err = withRetry(context.Background(), quickBackoff, time.Second, func(context.Context) error {
		calls++
		return apierrors.NewServiceUnavailable("away")
	})
	if !apierrors.IsServiceUnavailable(err) || calls != quickBackoff.Steps {
		t.Errorf("err %v after %d calls; want the last failure after %d", err, calls, quickBackoff.Steps)
	}
}
