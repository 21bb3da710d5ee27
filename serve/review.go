package serve

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/singleflight"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/cache"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
	authenticationclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"

	"github.com/sandscope/sandscope/kube"
)

// reviewCacheSize bounds each cache of review answers: a flood of made-up
// tokens or paths evicts the oldest answers instead of growing the heap.
const reviewCacheSize = 4096

// errNoBearer: the request carries no bearer token, or an empty one.
var errNoBearer = errors.New("no bearer token")

// reviewedUser is who a TokenReview says a token belongs to, as a
// SubjectAccessReview asks about them.
type reviewedUser struct {
	Name   string
	UID    string
	Groups []string
	Extra  map[string]authorizationv1.ExtraValue
}

// tokenReviewer asks the API server (a TokenReview) whose a bearer token is.
// The answer, yes or no, is kept for a while under the token's hash, so a
// scraper's token is reviewed once a minute, not once a scrape; a failure to
// get an answer is not kept.
type tokenReviewer struct {
	client  authenticationclient.TokenReviewInterface
	answers *cache.LRUExpireCache // sha256(token) → tokenAnswer
	asking  singleflight.Group    // one review at a time per token, however many scrapes wait
	ttl     time.Duration
	timeout time.Duration
	backoff wait.Backoff
}

type tokenAnswer struct {
	user          reviewedUser
	authenticated bool
}

func newTokenReviewer(client authenticationclient.TokenReviewInterface, clock cache.Clock, ttl, timeout time.Duration, backoff wait.Backoff) *tokenReviewer {
	return &tokenReviewer{client: client, answers: cache.NewLRUExpireCacheWithClock(reviewCacheSize, clock), ttl: ttl, timeout: timeout, backoff: backoff}
}

// bearerToken is the token of r's "Authorization: Bearer" header.
func bearerToken(r *http.Request) (string, error) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return "", errNoBearer
	}
	return strings.TrimSpace(token), nil
}

// review says who token belongs to; ok is false when the API server does
// not accept it.
func (t *tokenReviewer) review(ctx context.Context, token string) (reviewedUser, bool, error) {
	key := sha256.Sum256([]byte(token))
	if a, ok := t.answers.Get(key); ok {
		ans := a.(tokenAnswer)
		return ans.user, ans.authenticated, nil
	}
	a, err, _ := t.asking.Do(string(key[:]), func() (any, error) { return t.ask(context.WithoutCancel(ctx), key, token) })
	if err != nil {
		return reviewedUser{}, false, err
	}
	ans := a.(tokenAnswer)
	return ans.user, ans.authenticated, nil
}

// ask asks the API server for review's answer and keeps it. Its context
// is not the first asker's cancellation: others may be waiting on the answer;
// each try has its own time limit.
func (t *tokenReviewer) ask(ctx context.Context, key [sha256.Size]byte, token string) (tokenAnswer, error) {
	var status authenticationv1.TokenReviewStatus
	err := withRetry(ctx, t.backoff, t.timeout, func(ctx context.Context) error {
		res, err := t.client.Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
		if err == nil {
			status = res.Status
		}
		return err
	})
	if err != nil {
		return tokenAnswer{}, fmt.Errorf("token review: %w", err)
	}
	if status.Error != "" && !status.Authenticated {
		// The API server could not decide (an authenticator failed): not an
		// answer to keep.
		return tokenAnswer{}, fmt.Errorf("token review: %s", status.Error)
	}
	ans := tokenAnswer{authenticated: status.Authenticated}
	if status.Authenticated {
		u := status.User
		ans.user = reviewedUser{Name: u.Username, UID: u.UID, Groups: u.Groups}
		if len(u.Extra) > 0 {
			ans.user.Extra = make(map[string]authorizationv1.ExtraValue, len(u.Extra))
			for k, v := range u.Extra {
				ans.user.Extra[k] = authorizationv1.ExtraValue(v)
			}
		}
	}
	t.answers.Add(key, ans, t.ttl)
	return ans, nil
}

// accessReviewer asks the API server (a SubjectAccessReview) whether a user
// may get a non-resource URL. An allow is kept longer than a deny, so a
// grant just made takes effect quickly; a failure to get an answer is not
// kept.
type accessReviewer struct {
	client            authorizationclient.SubjectAccessReviewInterface
	answers           *cache.LRUExpireCache // accessKey → accessAnswer
	allowTTL, denyTTL time.Duration
	timeout           time.Duration
	backoff           wait.Backoff
}

type accessAnswer struct {
	allowed bool
	reason  string
}

func newAccessReviewer(client authorizationclient.SubjectAccessReviewInterface, clock cache.Clock, allowTTL, denyTTL, timeout time.Duration, backoff wait.Backoff) *accessReviewer {
	return &accessReviewer{client: client, answers: cache.NewLRUExpireCacheWithClock(reviewCacheSize, clock), allowTTL: allowTTL, denyTTL: denyTTL, timeout: timeout, backoff: backoff}
}

// mayGet says whether u may get the non-resource URL path, and the API
// server's reason when it may not.
func (a *accessReviewer) mayGet(ctx context.Context, u reviewedUser, path string) (bool, string, error) {
	spec := authorizationv1.SubjectAccessReviewSpec{
		User: u.Name, UID: u.UID, Groups: u.Groups, Extra: u.Extra,
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: path, Verb: "get"},
	}
	key := accessKey(spec)
	if v, ok := a.answers.Get(key); ok {
		ans := v.(accessAnswer)
		return ans.allowed, ans.reason, nil
	}
	var status authorizationv1.SubjectAccessReviewStatus
	err := withRetry(ctx, a.backoff, a.timeout, func(ctx context.Context) error {
		res, err := a.client.Create(ctx, &authorizationv1.SubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
		if err == nil {
			status = res.Status
		}
		return err
	})
	if err != nil {
		return false, "", fmt.Errorf("subject access review: %w", err)
	}
	if !status.Allowed && status.EvaluationError != "" && !status.Denied {
		// No authorizer decided and one failed: not an answer to keep.
		return false, "", fmt.Errorf("subject access review: %s", status.EvaluationError)
	}
	ans := accessAnswer{allowed: status.Allowed && !status.Denied, reason: status.Reason}
	ttl := a.denyTTL
	if ans.allowed {
		ttl = a.allowTTL
	}
	a.answers.Add(key, ans, ttl)
	return ans.allowed, ans.reason, nil
}

// accessKey is one string for everything a SubjectAccessReview asks, each
// part length-prefixed so that no two questions share a key.
func accessKey(s authorizationv1.SubjectAccessReviewSpec) string {
	var b strings.Builder
	put := func(v string) { fmt.Fprintf(&b, "%d:%s", len(v), v) }
	put(s.User)
	put(s.UID)
	put(s.NonResourceAttributes.Verb)
	put(s.NonResourceAttributes.Path)
	fmt.Fprintf(&b, "g%d", len(s.Groups))
	for _, g := range s.Groups {
		put(g)
	}
	keys := make([]string, 0, len(s.Extra))
	for k := range s.Extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	fmt.Fprintf(&b, "e%d", len(keys))
	for _, k := range keys {
		put(k)
		fmt.Fprintf(&b, "%d", len(s.Extra[k]))
		for _, v := range s.Extra[k] {
			put(v)
		}
	}
	return b.String()
}

// withRetry runs call, each try within timeout, again after backoff while
// the API server's failure is one that passes, and not past ctx.
func withRetry(ctx context.Context, backoff wait.Backoff, timeout time.Duration, call func(context.Context) error) error {
	return kube.RetryLostAnswers(ctx, backoff, passing, func(ctx context.Context) error {
		tctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		return call(tctx)
	})
}

// passing reports whether a review's failure may pass on a retry within
// the scrape: an answer lost (kube.AnswerLost), a try that ran out of its
// time, or an API server not listening for a moment (restarting).
func passing(err error) bool {
	return kube.AnswerLost(err) || utilnet.IsConnectionRefused(err) || errors.Is(err, context.DeadlineExceeded)
}
