package troupehttp_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe/backoff"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/balance"
	"github.com/troupe-go/troupe/troupehttp"
)

// One replica of three answers 503 to every request, and a Retry(2)
// outside the balancer retries a 503. To the balancer a 503 is a
// response, not a failure, unless Classify says so: without it the
// replica is drawn as often as the others (costs are pending requests
// here, all equal), retries go back to it and a call that drew it three
// times in a row ends with its 503; with balance.Classify(troupehttp.
// IsFailure), the replica is in its cooldown after each 503, every retry
// goes to another replica, and no call ends with a 503.
//
// spec: BAL2, BAL3
func TestA503ReplicaIsAFailureToTheBalancerWhenClassified(t *testing.T) {
	a, b := newReplica(t, "a", nil), newReplica(t, "b", nil)
	sick := newReplica(t, "sick", func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
	})
	bo, err := backoff.New(time.Millisecond, 2*time.Millisecond)
	require.NoError(t, err)
	const calls = 600
	run := func(opts ...balance.Option[res]) (s *replicaSet, failed int, backAtSick int) {
		s = newReplicaSetRetrying(t, troupehttp.Retry(2, bo),
			func() stages.Builder[req, res] { return stages.Stack[req, res]().Limit(8) },
			append([]balance.Option[res]{balance.PendingRequests(), balance.FailureCooldown(time.Minute)}, opts...)...)
		s.insert(t, a.URL, b.URL, sick.URL)
		for i := range calls {
			code, body := s.get(t, strconv.Itoa(i))
			if code != http.StatusOK {
				require.Equal(t, http.StatusServiceUnavailable, code, body)
				failed++
			}
		}
		for _, as := range s.rt.byCall() {
			for i := 1; i < len(as); i++ {
				if as[i-1].host == sick.host() && as[i].host == sick.host() {
					backAtSick++
				}
			}
		}
		return s, failed, backAtSick
	}

	_, failedBefore, backBefore := run()
	sickBefore := sick.hits.Load()
	s, failedAfter, backAfter := run(balance.Classify(troupehttp.IsFailure))
	t.Logf("unclassified: %d of %d calls ended with a 503, %d retries went back to the 503 replica, which got %d requests", failedBefore, calls, backBefore, sickBefore)
	t.Logf("classified: %d of %d calls ended with a 503, %d retries went back to it, which got %d requests; its stats: %+v",
		failedAfter, calls, backAfter, sick.hits.Load()-sickBefore, s.stats()[sick.URL])
	assert.Positive(t, backBefore, "unclassified, retries go back to the 503 replica")
	assert.Positive(t, failedBefore, "unclassified, some calls draw it three times")
	assert.Zero(t, backAfter, "classified, no retry goes back to it")
	assert.Zero(t, failedAfter, "classified, no call ends with its 503")
	assert.Equal(t, int64(1), sick.hits.Load()-sickBefore, "tried once: then in its cooldown")
	assert.Equal(t, uint64(1), s.stats()[sick.URL].Errors)
	assertRetriedElsewhere(t, s.rt, sick.host())
}
