package statemachine

import "pgregory.net/rapid"

// Operations that inject failures: each one counts against maxFaults, so
// that no supervisor's restart intensity is reached by design.

// inject counts an injected failure, up to maxFaults a sequence.
func (m *machine) inject(t *rapid.T) {
	if m.faults >= maxFaults {
		t.Skip("enough faults")
	}
	m.faults++
}

// restart makes the mock's next readiness check panic: the stage asking
// is restarted by its supervisor.
func (m *machine) restart(t *rapid.T) {
	if m.s.innermost() == "retry" && !enableRetryRestarts {
		t.Skip("enableRetryRestarts is off")
	}
	m.connFailure(t)
	m.inject(t)
	m.s.mock.PanicOnReady("statemachine: readiness panics")
}

// plainPanic makes the plain service's next Reserve panic.
func (m *machine) plainPanic(t *rapid.T) {
	m.inject(t)
	m.s.plain.panicNext.Store(true)
}

// dialFault makes the Reconnect's next dial fail, block or panic.
func (m *machine) dialFault(t *rapid.T) {
	m.connFailure(t)
	var modes []dialMode
	if enableDialFaults {
		modes = append(modes, dialFail, dialBlock)
	}
	if enableDialPanics {
		modes = append(modes, dialPanic)
	}
	m.inject(t)
	mode := rapid.SampledFrom(modes).Draw(t, "dial")
	m.w.mu.Lock()
	m.w.nextDial = mode
	m.w.mu.Unlock()
}

// connFailure skips an operation that fails a Reconnect's connection actor
// in a host that restarts it at once, while enableImmediateConnRestarts is
// off.
func (m *machine) connFailure(t *rapid.T) {
	if m.s.rc != nil && m.s.pipe == nil && !enableImmediateConnRestarts {
		t.Skip("enableImmediateConnRestarts is off")
	}
}

// callbackPanic makes the Reconnect's next state callback panic.
func (m *machine) callbackPanic(t *rapid.T) {
	m.inject(t)
	m.w.panicOnChange.Store(true)
}
