package backoff

import (
	"testing"

	"github.com/troupe-go/troupe/internal/leakcheck"
)

func TestMain(m *testing.M) { leakcheck.Main(m) }
