//go:build !race

// The race detector's own allocations would blur the count, and `go test -race` runs the
// rest of the package (tests/go/run.sh runs this without it, and under -asan).

package flakery

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"flakery.dev/go/internal/cheap"
)

// loops is the bar: 100,000 calls of each function.
const loops = 100_000

// mostGrowth: a leak of 30 bytes a call (a short C string) is 3 MB over loops calls; what
// a call may leave for good (a thread's last error, a cache that fills once) stays far below.
const mostGrowth = 1 << 20

// unfreedHandles: the handles a measure may leave to their finalizers, the last few made
// (a stack slot may keep one alive a little longer); a few kilobytes of the C heap.
const unfreedHandles = 16

// mostLive bounds the handles alive at once in a loop: the library keeps some tables sized by
// the most handles alive at a time (their capacity stays), which the warm-up must reach.
const mostLive = 1000

// made counts the handles the loops make, handlesFreed those their finalizers freed.
var made int64

// settle waits until the finalizers have freed the handles made, but the last few.
func settle(t *testing.T) {
	t.Helper()
	// Finalizers run after a collection finds their objects unreachable, on the finalizer
	// goroutine: collect until it has freed the handles made (bounded: handles that are never
	// freed fail here, which is a leak too).
	for round := 0; handlesFreed.Load() < made-unfreedHandles; round++ {
		if round == 1000 {
			t.Fatalf("%d of %d handles freed after 1000 collections", handlesFreed.Load(), made)
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}

// heapInUse is the C heap in use once the handles made are freed.
func heapInUse(t *testing.T) int64 {
	t.Helper()
	settle(t)
	n, ok := cheap.InUse()
	if !ok {
		if os.Getenv("CI") == "true" {
			t.Fatal("the C library gives no count of its heap (no mallinfo2, no sanitizer)")
		}
		t.Skip("the C library gives no count of its heap (not glibc): the memory test needs one")
	}
	return n
}

// bounded runs call a warm-up's worth, then loops times, and fails if the C heap grew by
// mostGrowth or more. call returns how many handles it made (0 for most).
func bounded(t *testing.T, name string, call func() int) {
	t.Helper()
	run := func(n int) {
		for i := 0; i < n; i++ {
			made += int64(call())
			if made-handlesFreed.Load() > mostLive {
				settle(t)
			}
		}
	}
	run(2 * mostLive)
	before := heapInUse(t)
	run(loops)
	after := heapInUse(t)
	if grown := after - before; grown >= mostGrowth {
		t.Errorf("%s: the C heap grew by %d bytes over %d calls", name, grown, loops)
	}
}

// must fails the test (once per loop is enough to see it) when err is not want.
func must(t *testing.T, name string, err error, want error) {
	if want == nil && err != nil || want != nil && !errors.Is(err, want) {
		t.Fatalf("%s: %v, wanted %v", name, err, want)
	}
}

const fieldList = "time:41,datacenter:5,worker:5,sequence:12;epoch=1288834974657"

func TestMemoryOfGenerators(t *testing.T) {
	g, err := New(Options{Layout: String(fieldList), DatacenterID: Uint64(1), WorkerID: Uint64(2)})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	id, _ := g.NextID()
	bounded(t, "New, Close", func() int {
		g, err := New(Options{Layout: String(fieldList), DatacenterID: Uint64(1), WorkerID: Uint64(2),
			MaxBorrowMs: Uint64(5), SequencePolicy: SequenceBorrow})
		must(t, "New", err, nil)
		must(t, "Close", g.Close(), nil)
		_, err = g.NextID()
		must(t, "NextID after Close", err, ErrLeaseLost)
		return 1
	})
	bounded(t, "New with constant fields", func() int {
		_, err := New(Options{Layout: String("vesta-max-peak"), WorkerID: Uint64(3),
			Fields: map[string]uint64{"version": 1, "method": 2}})
		must(t, "New", err, nil)
		return 1
	})
	bounded(t, "New refused (a database URL with a password)", func() int {
		_, err := New(Options{Layout: String("twitter"), WorkerID: Uint64(99),
			DatabaseURL: String("postgres://user:secret@127.0.0.1:1/db"), DatabaseMode: String("lease")})
		must(t, "New", err, ErrInvalidArgument)
		_, err = New(Options{Layout: String("not a layout"), Fields: map[string]uint64{"x": 1}})
		must(t, "New", err, ErrInvalidLayout)
		return 0
	})
	bounded(t, "Generator.NextID", func() int { _, err := g.NextID(); must(t, "NextID", err, nil); return 0 })
	bounded(t, "Generator.NextIDs", func() int { _, err := g.NextIDs(16); must(t, "NextIDs", err, nil); return 0 })
	bounded(t, "Generator.NextIDs(-1)", func() int {
		_, err := g.NextIDs(-1)
		must(t, "NextIDs", err, ErrInvalidArgument)
		return 0
	})
	bounded(t, "NextID", func() int { _, err := NextID(); must(t, "NextID", err, nil); return 0 })
	bounded(t, "NextIDs", func() int { _, err := NextIDs(16); must(t, "NextIDs", err, nil); return 0 })
	bounded(t, "WorkerID, DatacenterID, Source, Layout", func() int {
		if g.WorkerID() != 2 || g.DatacenterID() != 1 || g.Source() != "explicit" || g.Layout() != "twitter" {
			t.Fatal("the generator's facts changed")
		}
		return 0
	})
	bounded(t, "Generator.Decode", func() int { _, err := g.Decode(id); must(t, "Decode", err, nil); return 0 })
	bounded(t, "Generator.Decode(-1)", func() int {
		_, err := g.Decode(-1)
		must(t, "Decode", err, ErrInvalidArgument)
		return 0
	})
}

func TestMemoryOfCodecs(t *testing.T) {
	g, err := New(Options{Layout: String("twitter"), WorkerID: Uint64(4)})
	if err != nil {
		t.Fatal(err)
	}
	id, _ := g.NextID()
	vesta := Parts{TimestampMs: 1_500_000_000_000, WorkerID: 1, Fields: map[string]uint64{"version": 0}}
	for _, c := range []struct {
		name string
		call func() error
		want error
	}{
		{"Decode", func() error { _, err := Decode(fieldList, id); return err }, nil},
		{"Decode refused", func() error { _, err := Decode("time:99", id); return err }, ErrInvalidLayout},
		{"DecodeField", func() error { _, err := DecodeField(fieldList, id, "worker"); return err }, nil},
		{"DecodeField refused", func() error { _, err := DecodeField(fieldList, id, "no-such-field"); return err }, ErrInvalidArgument},
		{"DecodeU64", func() error { _, err := DecodeU64("discord", ^uint64(0)); return err }, nil},
		{"Compose", func() error { _, err := Compose("vesta-max-peak", vesta); return err }, nil},
		{"Compose refused", func() error {
			_, err := Compose("twitter", Parts{TimestampMs: 1_500_000_000_000, WorkerID: 1 << 20})
			return err
		}, ErrInvalidArgument},
		{"ComposeU64", func() error { _, err := ComposeU64("discord", Parts{TimestampMs: 3_900_000_000_000}); return err }, nil},
		{"LayoutTimeLeft", func() error { _, err := LayoutTimeLeft(fieldList); return err }, nil},
		{"NormalizeLayout", func() error { _, err := NormalizeLayout(fieldList); return err }, nil},
		{"NormalizeLayout refused", func() error { _, err := NormalizeLayout("time:1"); return err }, ErrInvalidLayout},
		{"ToBase32", func() error { _, err := ToBase32(id); return err }, nil},
		{"ToBase62", func() error { _, err := ToBase62(id); return err }, nil},
		{"ToBase32 refused", func() error { _, err := ToBase32(-1); return err }, ErrInvalidArgument},
		{"FromBase32", func() error { _, err := FromBase32("01ARZ3NDEKTSV"); return err }, nil},
		{"FromBase62", func() error { _, err := FromBase62("0000000000A"); return err }, nil},
		{"FromBase32 refused", func() error { _, err := FromBase32("U!"); return err }, ErrInvalidArgument},
		{"FromBase62 refused", func() error { _, err := FromBase62(""); return err }, ErrInvalidArgument},
		{"Version", func() error {
			if Version() == "" {
				return errors.New("no version")
			}
			return nil
		}, nil},
		{"Error.Error", func() error {
			_, err := Decode("", 1)
			if !strings.HasPrefix(err.Error(), "flakery: invalid_layout") {
				return fmt.Errorf("%v", err)
			}
			return nil
		}, nil},
	} {
		bounded(t, c.name, func() int { must(t, c.name, c.call(), c.want); return 0 })
	}
}

// idServer is a tiny flakery serve for the client: its layout, and blocks of IDs from a
// generator of its own.
func idServer(t *testing.T) *httptest.Server {
	g, err := New(Options{Layout: String("twitter"), WorkerID: Uint64(5)})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/layout":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"spec":"twitter"}`)
		case "/v1/ids":
			n, err := strconv.Atoi(r.URL.Query().Get("count"))
			if err != nil || n < 1 || n > 100_000 {
				http.Error(w, "bad count", http.StatusBadRequest)
				return
			}
			mu.Lock()
			ids, err := g.NextIDs(n)
			mu.Unlock()
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			w.Header().Set("Content-Type", "text/plain")
			var b strings.Builder
			for _, id := range ids {
				b.WriteString(strconv.FormatInt(id, 10))
				b.WriteByte('\n')
			}
			fmt.Fprint(w, b.String())
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(server.Close)
	return server
}

func TestMemoryOfClients(t *testing.T) {
	server := idServer(t)
	o := DefaultClientOptions()
	o.Servers = []string{server.URL}
	o.Token = String("a-secret-token")
	// Small blocks: the stock (a block and the next, prefetched) is part of the heap.
	o.MaxBlock = 1000
	c, err := NewClient(o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	id, err := c.NextID()
	if err != nil {
		t.Fatal(err)
	}
	bounded(t, "DefaultClientOptions", func() int { _ = DefaultClientOptions(); return 0 })
	bounded(t, "NewClient, Close", func() int {
		o := DefaultClientOptions()
		o.Servers = []string{"http://127.0.0.1:1", "http://[::1]:1"}
		o.Token = String("a-secret-token")
		o.Layout = String("discord")
		c, err := NewClient(o)
		must(t, "NewClient", err, nil)
		must(t, "Close", c.Close(), nil)
		_, err = c.NextID()
		must(t, "NextID after Close", err, ErrInvalidArgument)
		return 1
	})
	bounded(t, "NewClient with a fallback", func() int {
		o := DefaultClientOptions()
		o.Servers = []string{"http://127.0.0.1:1"}
		o.Fallback = &Options{DatacenterID: Uint64(31), WorkerID: Uint64(31),
			DatabaseURL: String("postgres://user:secret@127.0.0.1:1/db")}
		_, err := NewClient(o)
		must(t, "NewClient", err, nil)
		return 1
	})
	bounded(t, "NewClient refused", func() int {
		o := DefaultClientOptions()
		o.Servers = []string{"ftp://127.0.0.1:1"}
		o.Token = String("a-secret-token")
		_, err := NewClient(o)
		must(t, "NewClient ftp", err, ErrInvalidArgument)
		o.Servers = []string{"http://127.0.0.1:1"}
		o.MinBlock = 0
		_, err = NewClient(o)
		must(t, "NewClient MinBlock 0", err, ErrInvalidArgument)
		o.Fallback = &Options{WorkerID: Uint64(1 << 20)}
		_, err = NewClient(o)
		must(t, "NewClient bad fallback", err, ErrInvalidArgument)
		return 0
	})
	bounded(t, "Client.NextID", func() int { _, err := c.NextID(); must(t, "NextID", err, nil); return 0 })
	bounded(t, "Client.NextIDs", func() int { _, err := c.NextIDs(8); must(t, "NextIDs", err, nil); return 0 })
	bounded(t, "Client.Decode", func() int { _, err := c.Decode(id); must(t, "Decode", err, nil); return 0 })
	bounded(t, "Client.Layout", func() int {
		if c.Layout() != "twitter" {
			t.Fatal("layout")
		}
		return 0
	})

	dead := DefaultClientOptions()
	dead.Servers = []string{"http://127.0.0.1:1"}
	dead.Timeout = 50 * time.Millisecond
	unavailable, err := NewClient(dead)
	if err != nil {
		t.Fatal(err)
	}
	defer unavailable.Close()
	bounded(t, "Client.NextID, servers unavailable", func() int {
		_, err := unavailable.NextID()
		must(t, "NextID", err, ErrServersUnavailable)
		return 0
	})
	bounded(t, "Client.NextIDs, servers unavailable", func() int {
		_, err := unavailable.NextIDs(4)
		must(t, "NextIDs", err, ErrServersUnavailable)
		return 0
	})
}
