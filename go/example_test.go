package flakery_test

import (
	"errors"
	"fmt"

	"flakery.dev/go"
)

func Example() {
	g, err := flakery.New(flakery.Options{Layout: flakery.String("twitter"), WorkerID: flakery.Uint64(7)})
	if err != nil {
		panic(err)
	}
	defer g.Close()
	id, err := g.NextID()
	if err != nil {
		panic(err)
	}
	parts, _ := g.Decode(id)
	fmt.Println(parts.WorkerID)
	// Output: 7
}

func ExampleDecode() {
	parts, err := flakery.Decode("discord", 175928847299117063)
	if err != nil {
		panic(err)
	}
	fmt.Println(parts.Time().UTC(), parts.DatacenterID, parts.WorkerID, parts.Sequence)
	// Output: 2016-04-30 11:18:25.796 +0000 UTC 1 0 7
}

func ExampleCompose() {
	id, err := flakery.Compose("discord", flakery.Parts{TimestampMs: 1462015105796, DatacenterID: 1, Sequence: 7})
	fmt.Println(id, err)
	// Output: 175928847299117063 <nil>
}

func ExampleError() {
	_, err := flakery.Decode("twitter", -1)
	fmt.Println(errors.Is(err, flakery.ErrInvalidArgument))
	// Output: true
}
