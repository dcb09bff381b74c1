package troupetest

import (
	"errors"
	"testing"

	"github.com/troupe-go/troupe"
)

// BadOption fails t unless err is a configuration error of stage about
// option: a *troupe.ConfigError, found with errors.As under any wrapping,
// whose Stage and Option are the ones given, and which matches
// troupe.ErrBadConfig. It returns the error found (nil when none is).
func BadOption(t testing.TB, err error, stage, option string) *troupe.ConfigError {
	t.Helper()
	var ce *troupe.ConfigError
	if !errors.As(err, &ce) {
		t.Errorf("want a *troupe.ConfigError of %s about %s, got %v", stage, option, err)
		return nil
	}
	if ce.Stage != stage || ce.Option != option {
		t.Errorf("want a configuration error of %s about %s, got one of %q about %q: %v", stage, option, ce.Stage, ce.Option, err)
	}
	if !errors.Is(err, troupe.ErrBadConfig) {
		t.Errorf("%v does not match troupe.ErrBadConfig", err)
	}
	return ce
}
