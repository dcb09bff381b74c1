package stagekit_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/actors/stagekit"
)

// Labeller is a stage that wraps the call: it watches every outcome on its
// way out (a Frame with a Hook) and labels the failures with the name of
// the downstream, counting them.
type Labeller[Req, Res any] struct {
	stagekit.Handle[Req, Res]
	b *labelling[Req, Res]
}

// Failures returns how many calls failed below the stage.
func (l *Labeller[Req, Res]) Failures() int64 { return l.b.failed.Load() }

// labelling is both the behavior (Request runs on the actor) and the hook
// of its frames (Complete runs wherever the outcome is produced, for many
// calls at once: it touches only the atomic counter and its own value).
type labelling[Req, Res any] struct {
	stagekit.Passthrough[Req, Res]
	label  string
	failed atomic.Int64
}

func (b *labelling[Req, Res]) Request(s *stagekit.Stage[Req, Res], e *stagekit.Envelope[Req, Res]) {
	if _, err := e.Push(b); err != nil { // no frame left: answer, never drop
		s.Answer(e, err)
		return
	}
	s.Forward(e)
}

func (b *labelling[Req, Res]) Complete(_ *stagekit.Envelope[Req, Res], _ *stagekit.Frame[Req, Res], out stagekit.Outcome[Res]) stagekit.Outcome[Res] {
	if out.Err != nil {
		b.failed.Add(1)
		out.Err = fmt.Errorf("%s: %w", b.label, out.Err)
	}
	return out
}

// NewLabeller spawns a Labeller over inner in host h.
func NewLabeller[Req, Res any](h troupe.Host, inner troupe.Service[Req, Res], label string) (*Labeller[Req, Res], error) {
	if label == "" {
		return nil, &troupe.ConfigError{Stage: "labeller", Option: "label", Why: "empty"}
	}
	b := &labelling[Req, Res]{label: label}
	st, err := stagekit.Spawn(h, stagekit.Config{Name: "labeller"}, inner, b)
	if err != nil {
		return nil, err
	}
	return &Labeller[Req, Res]{Handle: stagekit.NewHandle(st, nil), b: b}, nil
}

// A stage that wraps the call: every outcome passes its hook, which may
// change it.
func ExampleHook() {
	ctx := context.Background()
	sys := actors.NewSystem()
	defer sys.Shutdown(ctx)
	errOdd := errors.New("odd")
	api := actors.Func(func(_ context.Context, v int) (int, error) {
		if v%2 == 1 {
			return 0, errOdd
		}
		return v * 10, nil
	})
	l, err := NewLabeller(sys, api, "pricing")
	if err != nil {
		fmt.Println(err)
		return
	}
	for v := range 3 {
		out, err := troupe.Do(ctx, l, v)
		fmt.Println(out, err, errors.Is(err, errOdd))
	}
	fmt.Println("failures:", l.Failures())
	_, err = NewLabeller(sys, api, "")
	fmt.Println(err, errors.Is(err, troupe.ErrBadConfig))
	fmt.Println(l.Close(ctx))
	// Output:
	// 0 <nil> false
	// 0 pricing: odd true
	// 20 <nil> false
	// failures: 1
	// troupe: labeller: bad label: empty true
	// <nil>
}

// Gate is a stage with a line of waiting callers: while it is shut, the
// requests it takes wait in the stage, in order, until Open lets them go.
type Gate[Req, Res any] struct {
	stagekit.Handle[Req, Res]
	st *stagekit.Stage[Req, Res]
}

// Open lets the waiting requests go on, and every later one: safe from any
// goroutine, as it only posts a control message to the stage's actor.
func (g *Gate[Req, Res]) Open() { g.st.PostControl(openMsg{}) }

type openMsg struct{}

// gating is the behavior. Its fields belong to the actor: Request,
// Control, Fail and Idle run there, one at a time.
type gating[Req, Res any] struct {
	stagekit.Passthrough[Req, Res]
	open    bool
	waiting []*stagekit.Envelope[Req, Res] // kept, in order of arrival
}

func (b *gating[Req, Res]) Request(s *stagekit.Stage[Req, Res], e *stagekit.Envelope[Req, Res]) {
	if b.open {
		s.Forward(e)
		return
	}
	b.waiting = append(b.waiting, e) // kept: the stage answers or forwards it later
}

func (b *gating[Req, Res]) Control(s *stagekit.Stage[Req, Res], msg any) {
	if _, ok := msg.(openMsg); !ok {
		return
	}
	b.open = true
	for _, e := range b.waiting {
		if err := e.Ctx.Err(); err != nil {
			s.Answer(e, err) // its caller gave up while it waited
			continue
		}
		s.Forward(e)
	}
	b.waiting = nil
}

// Fail answers every waiting request: the stage restarts or stops.
func (b *gating[Req, Res]) Fail(s *stagekit.Stage[Req, Res], err error) {
	for _, e := range b.waiting {
		s.Answer(e, err)
	}
	b.waiting = nil
}

// Idle says whether a closing stage may stop: not while requests wait.
func (b *gating[Req, Res]) Idle() bool { return len(b.waiting) == 0 }

// NewGate spawns a shut Gate over inner in host h; capacity bounds the
// requests that may wait in it (0: no limit of its own).
func NewGate[Req, Res any](h troupe.Host, inner troupe.Service[Req, Res], capacity int) (*Gate[Req, Res], error) {
	st, err := stagekit.Spawn(h, stagekit.Config{Name: "gate", Capacity: capacity}, inner, &gating[Req, Res]{})
	if err != nil {
		return nil, err
	}
	return &Gate[Req, Res]{Handle: stagekit.NewHandle(st, nil), st: st}, nil
}

// A stage with a line of waiting callers: its behavior keeps the requests
// and lets them go from a control message.
func ExampleBehavior() {
	ctx := context.Background()
	sys := actors.NewSystem()
	defer sys.Shutdown(ctx)
	var calls atomic.Int64
	api := actors.Func(func(_ context.Context, v int) (int, error) { calls.Add(1); return v + 1, nil })
	g, err := NewGate(sys, api, 2)
	if err != nil {
		fmt.Println(err)
		return
	}
	// Two reservations take the gate's two slots; a third waits, here
	// until its context ends.
	p1, _ := g.Reserve(ctx)
	p2, _ := g.Reserve(ctx)
	short, cancel := context.WithCancel(ctx)
	cancel()
	_, err = g.Reserve(short)
	fmt.Println("third reservation:", errors.Is(err, context.Canceled))

	results := make(chan int, 2)
	for i, p := range []*troupe.Permit[int, int]{p1, p2} {
		go func() {
			out, _ := p.Call(ctx, i*100)
			results <- out
		}()
	}
	fmt.Println("calls while shut:", calls.Load())
	g.Open()
	fmt.Println(<-results + <-results)
	fmt.Println("calls:", calls.Load())
	fmt.Println(g.Close(ctx))
	// Output:
	// third reservation: true
	// calls while shut: 0
	// 102
	// calls: 2
	// <nil>
}
