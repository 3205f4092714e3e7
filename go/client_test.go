package flakery

import (
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// The Client runs against real flakery serve instances that tests/client/test_bindings.py
// starts, their URLs in the environment; without them (go test alone) it is skipped.
func testServers(t *testing.T) []string {
	servers := os.Getenv("FLAKERY_TEST_SERVERS")
	if servers == "" {
		t.Skip("FLAKERY_TEST_SERVERS is not set: tests/client/run.sh runs this test against real servers")
	}
	return strings.Split(servers, ",")
}

// clientOptions are the defaults (DefaultClientOptions, as a caller starts) with servers.
func clientOptions(servers ...string) ClientOptions {
	o := DefaultClientOptions()
	o.Servers = servers
	return o
}

func TestClientIDsFromGoroutinesAreUnique(t *testing.T) {
	c, err := NewClient(clientOptions(testServers(t)...))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const goroutines, each = 8, 1000
	results := make([][]int64, goroutines)
	errs := make([]error, goroutines)
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < each/2; i++ {
				id, err := c.NextID()
				if err != nil {
					errs[g] = err
					return
				}
				results[g] = append(results[g], id)
			}
			ids, err := c.NextIDs(each / 2)
			errs[g] = err
			results[g] = append(results[g], ids...)
		}(g)
	}
	wg.Wait()
	seen := make(map[int64]bool)
	for g := range results {
		if errs[g] != nil {
			t.Fatalf("goroutine %d: %v", g, errs[g])
		}
		for _, id := range results[g] {
			if id <= 0 || seen[id] {
				t.Fatalf("ID %d is not positive or was seen before", id)
			}
			seen[id] = true
		}
	}
	if len(seen) != goroutines*each {
		t.Fatalf("%d distinct IDs, want %d", len(seen), goroutines*each)
	}
	if c.Layout() != "twitter" {
		t.Fatalf("layout %q", c.Layout())
	}
	id := results[0][0]
	p, err := c.Decode(id)
	want, _ := Decode("twitter", id)
	if err != nil || p.TimestampMs != want.TimestampMs || p.WorkerID != want.WorkerID ||
		p.Sequence != want.Sequence || p.TimestampMs < 1700000000000 {
		t.Fatalf("Decode(%d) = %+v, %v; want %+v", id, p, err, want)
	}
}

// With every server down, the generator made from Fallback answers, and its IDs are its own
// node's (datacenter 31, worker 29: no server leases that node).
func TestClientFallbackAnswersWhenEveryServerIsDown(t *testing.T) {
	testServers(t)
	dead := os.Getenv("FLAKERY_TEST_DEAD_SERVER")
	options := clientOptions(dead)
	options.Timeout, options.RequestTimeout = 300*time.Millisecond, 300*time.Millisecond
	options.Fallback = &Options{DatacenterID: Uint64(31), WorkerID: Uint64(29)}
	c, err := NewClient(options)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ids, err := c.NextIDs(100)
	if err != nil {
		t.Fatalf("the fallback gave no IDs: %v", err)
	}
	id, err := c.NextID()
	if err != nil {
		t.Fatalf("the fallback gave no ID: %v", err)
	}
	ids = append(ids, id)
	for i, id := range ids {
		p, err := c.Decode(id)
		if err != nil || p.DatacenterID != 31 || p.WorkerID != 29 {
			t.Fatalf("ID %d is not the fallback's node's: %+v, %v", id, p, err)
		}
		if i > 0 && id <= ids[i-1] {
			t.Fatalf("ID %d after %d", id, ids[i-1])
		}
	}

	options.Fallback.WorkerID = Uint64(1 << 20)
	if _, err := NewClient(options); !errors.Is(err, ErrInvalidArgument) ||
		!strings.Contains(err.Error(), "worker_id") {
		t.Fatalf("a fallback's bad worker ID gave %v", err)
	}
}

func TestClientErrorsHaveTheClientCodes(t *testing.T) {
	testServers(t)
	dead := os.Getenv("FLAKERY_TEST_DEAD_SERVER")
	options := clientOptions(dead)
	options.Timeout, options.RequestTimeout = 300*time.Millisecond, 300*time.Millisecond
	c, err := NewClient(options)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.NextID()
	if !errors.Is(err, ErrServersUnavailable) || !strings.Contains(err.Error(), dead) {
		t.Fatalf("a dead server gave %v", err)
	}

	tokenServer := os.Getenv("FLAKERY_TEST_TOKEN_SERVER")
	options = clientOptions(tokenServer)
	options.Token = String("wrong-token-go-5b2a")
	wrong, err := NewClient(options)
	if err != nil {
		t.Fatal(err)
	}
	_, err = wrong.NextID()
	if !errors.Is(err, ErrUnauthorized) || strings.Contains(err.Error(), "wrong-token-go-5b2a") {
		t.Fatalf("a wrong token gave %v", err)
	}
	options.Token = String(os.Getenv("FLAKERY_TEST_TOKEN"))
	right, err := NewClient(options)
	if err != nil {
		t.Fatal(err)
	}
	if id, err := right.NextID(); err != nil || id <= 0 {
		t.Fatalf("the right token gave %d, %v", id, err)
	}
	if err := right.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := right.NextID(); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("a closed client gave %v", err)
	}

	if _, err := NewClient(clientOptions("ftp://127.0.0.1:1")); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("an ftp URL gave %v", err)
	}
}
