package redisquota

import (
	"fmt"

	"github.com/redis/go-redis/v9"
)

// checkClient checks a constructor's client and key.
func checkClient(c redis.Scripter, key string) error {
	switch {
	case c == nil:
		return fmt.Errorf("%w: nil Redis client", ErrBadConfig)
	case key == "":
		return fmt.Errorf("%w: empty key", ErrBadConfig)
	}
	var honours bool
	switch c := c.(type) {
	case *redis.Client:
		honours = c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		honours = c.Options().ContextTimeoutEnabled
	default:
		return nil // a client whose options are not known: the caller's word
	}
	if !honours {
		return fmt.Errorf("%w: the Redis client must honour contexts (set ContextTimeoutEnabled in its options), or a slow Redis would hold calls for its read timeout", ErrBadConfig)
	}
	return nil
}
