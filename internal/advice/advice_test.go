package advice_test

import (
	"errors"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe/internal/advice"
	"github.com/troupe-go/troupe/stages/retry"
	"github.com/troupe-go/troupe/troupetest"
)

func TestMain(m *testing.M) { troupetest.Main(m) }

// Parse reads a signed whole number of units; one a Duration cannot hold
// saturates, with strconv's range error only past int64; anything else is
// a syntax error and no wait.
//
// spec: KIT3
func TestParseReadsWholeUnitsAndSaturates(t *testing.T) {
	for _, c := range []struct {
		s    string
		unit time.Duration
		want time.Duration
		err  error
	}{
		{"120", time.Second, 2 * time.Minute, nil},
		{"0", time.Second, 0, nil},
		{"250", time.Millisecond, 250 * time.Millisecond, nil},
		{"+7", time.Millisecond, 7 * time.Millisecond, nil},
		{"-5", time.Millisecond, -5 * time.Millisecond, nil},
		{"99999999999999999", time.Millisecond, advice.Forever, nil},
		{"-99999999999999999", time.Millisecond, -advice.Forever, nil},
		{"9223372036854775807", time.Nanosecond, advice.Forever, nil},
		{"99999999999999999999", time.Second, advice.Forever, strconv.ErrRange},
		{"-99999999999999999999", time.Millisecond, -advice.Forever, strconv.ErrRange},
		{"9223372036854775808", time.Nanosecond, advice.Forever, strconv.ErrRange},
		{"soon", time.Second, 0, strconv.ErrSyntax},
		{"10s", time.Second, 0, strconv.ErrSyntax},
		{"", time.Second, 0, strconv.ErrSyntax},
	} {
		got, err := advice.Parse(c.s, c.unit)
		assert.Equal(t, c.want, got, "%q of %v", c.s, c.unit)
		if c.err == nil {
			assert.NoError(t, err, "%q", c.s)
		} else {
			assert.ErrorIs(t, err, c.err, "%q", c.s)
		}
	}
}

// Format writes a wait rounded up to its unit, never past what int64
// holds, so that a client that waits what it reads waits at least as long
// as asked; Parse reads back at least the wait written.
//
// spec: KIT3
func TestFormatRoundsUpSoThatTheWaitReadIsNoShorter(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		unit time.Duration
		want string
	}{
		{0, time.Second, "0"},
		{-time.Second, time.Second, "0"},
		{time.Nanosecond, time.Second, "1"},
		{time.Second, time.Second, "1"},
		{1500 * time.Millisecond, time.Second, "2"},
		{100 * time.Millisecond, time.Millisecond, "100"},
		{advice.Forever, time.Millisecond, "9223372036855"},
	} {
		assert.Equal(t, c.want, advice.Format(c.d, c.unit), "%v in %v", c.d, c.unit)
	}
	r := rand.New(rand.NewPCG(5, 6))
	for range 1000 {
		d := time.Duration(r.Int64N(int64(time.Hour)))
		for _, unit := range []time.Duration{time.Second, time.Millisecond} {
			back, err := advice.Parse(advice.Format(d, unit), unit)
			require.NoError(t, err)
			require.GreaterOrEqual(t, back, d)
			require.Less(t, back-d, unit, "rounded up by less than a unit")
		}
	}
}

type fixed time.Duration

func (f fixed) Delay(int) time.Duration { return time.Duration(f) }

var errDown = errors.New("down")

// attempts is the Attempts the policies embed: up to max retries of any
// error, 10 ms apart.
func attempts(max int) *retry.Attempts[int, string] {
	return &retry.Attempts[int, string]{
		Max: max, Backoff: fixed(10 * time.Millisecond),
		Retryable: func(_ string, err error) bool { return err != nil },
	}
}

// Retry waits the longer of the backoff and the advice; advice that asks
// for no retry, or for longer than the cap (the default cap when it is
// zero), hands the outcome back as it is, whatever retries are left; a
// negative cap ignores the advice without reading it.
//
// spec: KIT3
func TestRetryWaitsForTheAdviceUpToItsCap(t *testing.T) {
	advised := func(d time.Duration) func() (time.Duration, bool) {
		return func() (time.Duration, bool) { return d, true }
	}
	none := func() (time.Duration, bool) { return 0, false }
	for _, c := range []struct {
		name  string
		limit time.Duration
		read  func() (time.Duration, bool)
		again bool
		delay time.Duration
	}{
		{"no advice: the backoff", 0, none, true, 10 * time.Millisecond},
		{"longer advice", 0, advised(250 * time.Millisecond), true, 250 * time.Millisecond},
		{"shorter advice", 0, advised(5 * time.Millisecond), true, 10 * time.Millisecond},
		{"advice at the cap", time.Second, advised(time.Second), true, time.Second},
		{"asked not to retry", 0, advised(-1), false, 0},
		{"more than the cap", time.Second, advised(2 * time.Second), false, 0},
		{"more than the default cap", 0, advised(61 * time.Second), false, 0},
		{"advice ignored", -1, func() (time.Duration, bool) {
			t.Error("read with a negative cap")
			return -1, true
		}, true, 10 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, res, err := 1, "", errDown
			w, again := advice.Retry(attempts(3), &req, &res, &err, c.limit, time.Minute, c.read)
			assert.Equal(t, c.again, again)
			assert.Equal(t, c.delay, w.Delay)
			assert.Nil(t, w.Gate)
			assert.Same(t, errDown, err, "the error is left as it is")
		})
	}
}

// An outcome the advice refuses goes back as it is even with no retry left
// (not as retries spent), and takes no retry; one Retryable does not
// accept is judged by the Attempts alone, advice or not, as is a success
// under a nil Retryable (which accepts errors only).
//
// spec: KIT3
func TestRetryRefusesOnlyWhatTheAttemptsWouldRetry(t *testing.T) {
	tooLong := func() (time.Duration, bool) { return time.Hour, true }
	req, res := 1, ""

	err := errDown
	_, again := advice.Retry(attempts(0), &req, &res, &err, 0, time.Minute, tooLong)
	assert.False(t, again)
	assert.Same(t, errDown, err, "refused by the advice, not spent")
	err = errDown
	_, again = advice.Retry(attempts(0), &req, &res, &err, 0, time.Minute, func() (time.Duration, bool) { return 0, false })
	assert.False(t, again)
	assert.ErrorIs(t, err, retry.ErrExhausted, "without advice the Attempts judge: retries spent")

	a := attempts(1)
	err = errDown
	_, again = advice.Retry(a, &req, &res, &err, 0, time.Minute, tooLong)
	require.False(t, again)
	err = errDown
	w, again := advice.Retry(a, &req, &res, &err, 0, time.Minute, func() (time.Duration, bool) { return 0, false })
	assert.True(t, again, "the refusal took no retry")
	assert.Equal(t, 10*time.Millisecond, w.Delay)

	a = attempts(3)
	a.Retryable = func(string, error) bool { return false }
	err = errDown
	_, again = advice.Retry(a, &req, &res, &err, 0, time.Minute, tooLong)
	assert.False(t, again)
	assert.Same(t, errDown, err)

	a = attempts(3)
	a.Retryable = nil
	err = nil
	res = "ok"
	_, again = advice.Retry(a, &req, &res, &err, 0, time.Minute, tooLong)
	assert.False(t, again)
	assert.NoError(t, err)
	assert.Equal(t, "ok", res)
	err = errDown
	_, again = advice.Retry(a, &req, &res, &err, 0, time.Minute, tooLong)
	assert.False(t, again, "a nil Retryable accepts the error: the advice refuses it")
	assert.Same(t, errDown, err)
}
