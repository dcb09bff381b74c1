package buffer_test

import (
	"context"
	"testing"

	"github.com/troupe-go/troupe"
	"github.com/troupe-go/troupe/actors"
	"github.com/troupe-go/troupe/stages/buffer"
)

func TestSmoke(t *testing.T) {
	sys := actors.NewSystem()
	defer sys.Shutdown(context.Background())
	f := actors.Func(func(ctx context.Context, s string) (string, error) { return s + "!", nil })
	b, err := buffer.New[string, string](sys, f, 4)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		out, err := troupe.Do(context.Background(), troupe.Service[string, string](b), "hi")
		if err != nil || out != "hi!" {
			t.Fatal(out, err)
		}
	}
	if err := b.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Reserve(context.Background()); err == nil {
		t.Fatal("reserve after close")
	} else {
		t.Log(err)
	}
}
