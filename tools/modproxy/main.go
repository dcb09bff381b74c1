// Command modproxy writes a Go module proxy, a directory for
// GOPROXY=file://DIR, that holds troupe's released modules (the core,
// troupegrpc, troupeotel and redisquota) made from the repository at a
// revision, at the version the sibling modules require of the core:
//
//	go run ./modproxy -repo .. -out /tmp/proxy   # prints the version
//
// It refuses siblings that disagree on that version, or that require
// v0.0.0: a version no proxy has, which a user's build cannot resolve
// (the replace directives the siblings keep for development apply only
// inside this repository).
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	repo := flag.String("repo", ".", "the repository's root")
	rev := flag.String("rev", "HEAD", "the revision to take the modules from")
	out := flag.String("out", "", "the proxy directory to write (required)")
	flag.Parse()
	if *out == "" {
		flag.Usage()
		os.Exit(2)
	}
	v, err := build(*repo, *rev, *out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "modproxy:", err)
		os.Exit(1)
	}
	fmt.Println(v)
}
