// The Go quick start, built from a fresh module against the release tarball's go/ folder
// (tests/dist/run.sh).
package main

import (
	"errors"
	"fmt"
	"os"

	"flakery.dev/go"
)

func main() {
	id, err := flakery.NextID()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	g, err := flakery.New(flakery.Options{WorkerID: flakery.Uint64(7)})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer g.Close()
	ids, err := g.NextIDs(100)
	if err != nil || ids[99] <= ids[0] {
		fmt.Fprintln(os.Stderr, "NextIDs:", err)
		os.Exit(1)
	}
	parts, err := flakery.Decode("twitter", ids[99])
	if err != nil || parts.WorkerID != 7 {
		fmt.Fprintln(os.Stderr, "Decode:", parts, err)
		os.Exit(1)
	}
	if _, err := flakery.Decode("twitter", -1); !errors.Is(err, flakery.ErrInvalidArgument) {
		fmt.Fprintln(os.Stderr, "a negative ID was not refused:", err)
		os.Exit(1)
	}
	fmt.Printf("go quickstart %s: %d\n", flakery.Version(), id)
}
