package troupegrpc

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/troupe-go/troupe"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// spec: EG12
func TestRetryPolicyStopsAtAPermanentError(t *testing.T) {
	down := status.Error(codes.Unavailable, "down")
	require.True(t, Retryable(Result{}, down))
	marked := fmt.Errorf("while calling: %w", troupe.Permanent(down))
	require.False(t, Retryable(Result{}, marked), "permanent, whatever its code")
	require.False(t, RetryOn(codes.Unavailable, codes.Unknown)(Result{}, marked))
	require.True(t, answers(marked), "it answers its call: a hedged call ends with it")
}
