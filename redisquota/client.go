package redisquota

import (
	"github.com/redis/go-redis/v9"
)

// checkClient checks a constructor's client and key.
func checkClient(c redis.Scripter, key string) error {
	switch {
	case c == nil:
		return bad("Redis client", nil, "nil")
	case key == "":
		return bad("key", nil, "empty")
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
		return bad("Redis client", nil, "it must honour contexts (set ContextTimeoutEnabled in its options), or a slow Redis would hold calls for its read timeout")
	}
	return nil
}
