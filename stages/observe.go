package stages

import "github.com/troupe-go/troupe"

// Observe makes the stack's stages report to o under the pipeline name
// pipeline (see troupe.Observer): the requests each accepts, rejects and
// finishes, with latency and outcome, and its policy's events (retries,
// timeouts, sheds, state changes...). It replaces, for this stack, an
// observer attached to the actor system. A nil o is an error matching
// troupe.ErrBadConfig from Build.
func (b Builder[Req, Res]) Observe(o troupe.Observer, pipeline string) Builder[Req, Res] {
	b.tb = b.tb.Observe(o, pipeline)
	return b
}
