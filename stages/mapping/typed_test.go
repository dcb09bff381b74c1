package mapping_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages"
	"github.com/troupe-go/troupe/stages/mapping"
	"github.com/troupe-go/troupe/troupetest"
)

type query struct {
	Name string `json:"name"`
}

type answer struct {
	Greeting string `json:"greeting"`
}

func encodeQuery(_ context.Context, q query) ([]byte, error) { return json.Marshal(q) }

func decodeAnswer(b []byte) (answer, error) {
	var a answer
	err := json.Unmarshal(b, &a)
	return a, err
}

// A stack over []byte (a retry over a timeout over a transport that fails
// once, then answers JSON) sits under a typed client: a Request encodes the
// query, a Response decodes the answer, and a typed stack is built over the
// result. Both the one-step path and a reserved permit carry the call; a
// body that does not decode is the call's error.
//
// spec: BAL4
func TestAStackOverBytesSitsUnderATypedClient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sys := troupetest.NewSystem(t)
		var calls atomic.Int32
		transport := actors.Func(func(_ context.Context, body []byte) ([]byte, error) {
			if calls.Add(1)%2 == 1 {
				return nil, errors.New("connection reset")
			}
			var q query
			if err := json.Unmarshal(body, &q); err != nil {
				return nil, err
			}
			if q.Name == "garbage" {
				return []byte("{not json"), nil
			}
			return json.Marshal(answer{Greeting: "hello " + q.Name})
		})
		wire, err := stages.Stack[[]byte, []byte]().Retry(1, nil).Timeout(time.Second).Build(sys, transport)
		require.NoError(t, err)
		defer wire.Close(context.Background())
		enc, err := mapping.Request(wire, encodeQuery)
		require.NoError(t, err)
		client, err := mapping.Response(enc, decodeAnswer)
		require.NoError(t, err)
		typed, err := stages.Stack[query, answer]().Limit(4).Build(sys, client)
		require.NoError(t, err)
		defer typed.Close(context.Background())

		ctx := context.Background()
		a, err := troupe.Do(ctx, typed, query{Name: "ada"})
		require.NoError(t, err)
		assert.Equal(t, answer{Greeting: "hello ada"}, a)
		assert.EqualValues(t, 2, calls.Load(), "the retry below the mapping cured the reset")

		p, err := client.Reserve(ctx)
		require.NoError(t, err)
		a, err = p.Call(ctx, query{Name: "bob"})
		require.NoError(t, err)
		assert.Equal(t, answer{Greeting: "hello bob"}, a)

		_, err = troupe.Do(ctx, typed, query{Name: "garbage"})
		var syn *json.SyntaxError
		assert.ErrorAs(t, err, &syn, "the decoder's error is the outcome")
	})
}

// A request that fails to convert is the call's outcome: the inner service
// is never called, and the unit a permit reserved on it is released
// unused.
//
// spec: BAL4
func TestARequestThatFailsToConvertNeverReachesTheInnerService(t *testing.T) {
	mock, h := troupetest.NewMock[string, int]()
	errBad := errors.New("not a number")
	svc, err := mapping.Request(mock, func(_ context.Context, s string) (string, error) {
		if strings.TrimSpace(s) == "" {
			return "", errBad
		}
		return strings.TrimSpace(s), nil
	})
	require.NoError(t, err)
	ctx := context.Background()
	h.Allow(1)

	_, err = troupe.Do(ctx, svc, " ")
	assert.ErrorIs(t, err, errBad)
	assert.Equal(t, 1, h.Allowed(), "the one-step path reserves nothing for a request it cannot convert")

	p, err := svc.Reserve(ctx)
	require.NoError(t, err)
	assert.Zero(t, h.Allowed(), "the permit holds the inner unit")
	_, err = p.Call(ctx, "")
	assert.ErrorIs(t, err, errBad)
	assert.Equal(t, 1, h.Allowed(), "the inner unit is released unused")
	assert.Zero(t, h.Calls())

	res := troupetest.Go[string, int](ctx, svc, " 7 ")
	r := h.Next(ctx)
	assert.Equal(t, "7", r.Value, "the converted request is what the inner service gets")
	r.Respond(7)
	assert.Equal(t, troupetest.Result[int]{Value: 7}, <-res)
}
