package mapping

import (
	"context"

	"github.com/troupe-go/troupe"
)

// The layers below are the combinators that keep the request and response
// types, for a Builder (stages.Builder.Layer). Each builds no stage and
// spawns nothing: the host is not used. A nil f is Build's error, matching
// troupe.ErrBadConfig. The layers are safe for concurrent use.

// RequestLayer returns a layer that puts Request with f over the service
// inside it.
func RequestLayer[Req, Res any](f func(ctx context.Context, req Req) (Req, error)) troupe.Layer[Req, Res] {
	return troupe.LayerFunc[Req, Res](func(_ troupe.Host, inner troupe.Service[Req, Res]) (troupe.Service[Req, Res], error) {
		return Request(inner, f)
	})
}

// ResponseLayer returns a layer that puts Response with f over the service
// inside it.
func ResponseLayer[Req, Res any](f func(res Res) (Res, error)) troupe.Layer[Req, Res] {
	return troupe.LayerFunc[Req, Res](func(_ troupe.Host, inner troupe.Service[Req, Res]) (troupe.Service[Req, Res], error) {
		return Response(inner, f)
	})
}

// ErrLayer returns a layer that puts Err with f over the service inside it.
func ErrLayer[Req, Res any](f func(err error) error) troupe.Layer[Req, Res] {
	return troupe.LayerFunc[Req, Res](func(_ troupe.Host, inner troupe.Service[Req, Res]) (troupe.Service[Req, Res], error) {
		return Err(inner, f)
	})
}

// AndThenLayer returns a layer that puts AndThen with f over the service
// inside it.
func AndThenLayer[Req, Res any](f func(ctx context.Context, res Res) (Res, error)) troupe.Layer[Req, Res] {
	return troupe.LayerFunc[Req, Res](func(_ troupe.Host, inner troupe.Service[Req, Res]) (troupe.Service[Req, Res], error) {
		return AndThen(inner, f)
	})
}
