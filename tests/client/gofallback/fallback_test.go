// The Go package's Client with a fallback on a server's node ID, and Close, against the real
// server that tests/client/test_fallback_surfaces.py starts (datacenter 0, worker 11): the
// client core's refusal and closed client reach Go as errors matching ErrInvalidArgument.
package fallbacktest

import (
	"errors"
	"os"
	"strings"
	"testing"

	flakery "flakery.dev/go"
)

const named = "(datacenter_id 0, worker_id 11)"

func server(t *testing.T) string {
	url := os.Getenv("FLAKERY_TEST_FALLBACK_SERVER")
	if url == "" {
		t.Skip("FLAKERY_TEST_FALLBACK_SERVER is not set: tests/client/run.sh runs this test")
	}
	return url
}

func failsWith(t *testing.T, what string, err error, needle string) {
	t.Helper()
	if !errors.Is(err, flakery.ErrInvalidArgument) {
		t.Fatalf("%s: %v, not invalid_argument", what, err)
	}
	if !strings.Contains(err.Error(), needle) {
		t.Fatalf("%s: %q does not name %q", what, err.Error(), needle)
	}
}

func TestAFallbackOnAServersNodeIsRefused(t *testing.T) {
	opts := flakery.DefaultClientOptions()
	opts.Servers = []string{server(t)}
	opts.Fallback = &flakery.Options{DatacenterID: flakery.Uint64(0), WorkerID: flakery.Uint64(11)}
	c, err := flakery.NewClient(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.NextID()
	failsWith(t, "NextID", err, named)
	_, err = c.NextIDs(3)
	failsWith(t, "NextIDs", err, named)
	_, err = c.NextID()
	failsWith(t, "NextID again", err, "fallback")
}

func TestClosedIsFinal(t *testing.T) {
	opts := flakery.DefaultClientOptions()
	opts.Servers = []string{server(t)}
	c, err := flakery.NewClient(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = c.NextID()
	failsWith(t, "NextID after Close", err, "closed")
}
