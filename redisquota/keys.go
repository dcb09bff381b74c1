package redisquota

import (
	"fmt"
	"strings"
)

// DefaultPrefix starts every key, unless the Prefix option gives another.
const DefaultPrefix = "troupe:"

// keyBase is where a quota's keys start: the prefix, then the name in
// braces. The braces are a Redis Cluster hash tag: every key of one quota
// (a rate and its settings; a budget's leases, settings, epoch and
// hold-back) hashes to the slot of the name alone, so that each script,
// which touches several of them, runs on one node. The prefix may not
// hold braces (it would move the tag); the name may.
func keyBase(prefix, name string) string { return prefix + "{" + name + "}" }

func checkPrefix(p string) error {
	if strings.ContainsAny(p, "{}") {
		return fmt.Errorf("%w: the key prefix %q may not contain braces (they would change the keys' Redis Cluster hash tag)", ErrBadConfig, p)
	}
	return nil
}

// rateKeys are a Limiter's keys.
type rateKeys struct {
	rate string // the GCRA time
	conf string // the settings of the processes that use it
}

func newRateKeys(base string) rateKeys {
	return rateKeys{rate: base + ":rate", conf: base + ":rate:conf"}
}

// budgetKeys are a Budget's keys.
type budgetKeys struct {
	leases string // sorted set: lease name -> expiry (ms, Redis's clock)
	conf   string // the settings of the processes that use it
	epoch  string // which Redis state the leases belong to (see sync.go)
	hold   string // present while new leases are held back
}

func newBudgetKeys(base string) budgetKeys {
	return budgetKeys{leases: base + ":budget", conf: base + ":budget:conf", epoch: base + ":budget:epoch", hold: base + ":budget:hold"}
}

// list is the keys in the order the budget's scripts take them.
func (k budgetKeys) list() []string { return []string{k.leases, k.epoch, k.hold} }
