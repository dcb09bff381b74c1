package redisquota

import (
	"strconv"
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
		return bad("Prefix", strconv.Quote(p), "may not contain braces (they would change the keys' Redis Cluster hash tag)")
	}
	return nil
}

// rateKeys are a Limiter's keys, and the KEYS of its scripts (made once:
// go-redis only reads them).
type rateKeys struct {
	rate string // the GCRA time
	conf string // the settings of the processes that use it

	gcra, sync []string
}

func newRateKeys(base string) rateKeys {
	k := rateKeys{rate: base + ":rate", conf: base + ":rate:conf"}
	k.gcra, k.sync = []string{k.rate}, []string{k.conf}
	return k
}

// budgetKeys are a Budget's keys, and the KEYS of its scripts (made once:
// go-redis only reads them).
type budgetKeys struct {
	leases string // sorted set: lease name -> expiry (ms, Redis's clock)
	conf   string // the settings of the processes that use it
	epoch  string // which Redis state the leases belong to (see sync.go)
	hold   string // present while new leases are held back

	leased []string // the acquire and renew scripts': leases, epoch, hold
	only   []string // the release and in-use scripts': leases
	sync   []string // the sync script's: conf, epoch, hold
}

func newBudgetKeys(base string) budgetKeys {
	k := budgetKeys{leases: base + ":budget", conf: base + ":budget:conf", epoch: base + ":budget:epoch", hold: base + ":budget:hold"}
	k.leased, k.only, k.sync = []string{k.leases, k.epoch, k.hold}, []string{k.leases}, []string{k.conf, k.epoch, k.hold}
	return k
}
