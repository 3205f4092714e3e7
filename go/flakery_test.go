package flakery

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestMain gives the process-wide generator a lease directory of its own: the tests must
// not depend on the host's default (which is refused inside containers).
func TestMain(m *testing.M) {
	if os.Getenv("FLAKERY_LEASE_DIR") == "" && os.Getenv("FLAKERY_WORKER_ID") == "" {
		dir, err := os.MkdirTemp("", "flakery-go-test-")
		if err != nil {
			panic(err)
		}
		os.Setenv("FLAKERY_LEASE_DIR", dir)
		code := m.Run()
		os.RemoveAll(dir)
		exit(code)
	}
	exit(m.Run())
}

// exit collects the garbage before the process ends, so that LeakSanitizer (go test -asan)
// sees C memory that only dead Go objects pointed to as unreachable: under
// GODEBUG=clobberfree=1 (tests/go/run.sh) the collector overwrites what it frees.
func exit(code int) {
	runtime.GC()
	runtime.GC()
	os.Exit(code)
}

func TestVersion(t *testing.T) {
	if v := Version(); v == "" || strings.Count(v, ".") != 2 {
		t.Fatalf("version %q", v)
	}
}

// generate runs 4 goroutines of perGoroutine calls each and checks that every ID is distinct
// and that each goroutine's IDs increase.
func generate(t *testing.T, next func() (int64, error)) {
	const goroutines, perGoroutine = 4, 20000
	results := make([][]int64, goroutines)
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			ids := make([]int64, 0, perGoroutine)
			for i := 0; i < perGoroutine; i++ {
				id, err := next()
				if err != nil {
					t.Errorf("goroutine %d: %v", g, err)
					return
				}
				ids = append(ids, id)
			}
			results[g] = ids
		}(g)
	}
	wg.Wait()
	seen := make(map[int64]bool, goroutines*perGoroutine)
	for g, ids := range results {
		if len(ids) != perGoroutine {
			t.Fatalf("goroutine %d made %d IDs", g, len(ids))
		}
		if !sort.SliceIsSorted(ids, func(i, j int) bool { return ids[i] < ids[j] }) {
			t.Errorf("goroutine %d: IDs do not increase", g)
		}
		for _, id := range ids {
			if id <= 0 || seen[id] {
				t.Fatalf("ID %d is a duplicate or not positive", id)
			}
			seen[id] = true
		}
	}
}

func TestGeneratorFromFourGoroutines(t *testing.T) {
	g, err := New(Options{Layout: String("twitter"), DatacenterID: Uint64(3), WorkerID: Uint64(9)})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	generate(t, g.NextID)

	if g.WorkerID() != 9 || g.DatacenterID() != 3 || g.Source() != "explicit" || g.Layout() != "twitter" {
		t.Fatalf("getters: worker %d datacenter %d source %q layout %q",
			g.WorkerID(), g.DatacenterID(), g.Source(), g.Layout())
	}
	id, err := g.NextID()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []func() (Parts, error){
		func() (Parts, error) { return Decode("twitter", id) },
		func() (Parts, error) { return g.Decode(id) },
	} {
		parts, err := p()
		if err != nil || parts.WorkerID != 9 || parts.DatacenterID != 3 {
			t.Fatalf("decode of a new ID: %+v, %v", parts, err)
		}
	}
	ids, err := g.NextIDs(1000)
	if err != nil || len(ids) != 1000 || ids[0] <= id {
		t.Fatalf("NextIDs: %d IDs, %v", len(ids), err)
	}
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			t.Fatalf("NextIDs: %d after %d", ids[i], ids[i-1])
		}
	}
	if empty, err := g.NextIDs(0); err != nil || len(empty) != 0 {
		t.Fatalf("NextIDs(0): %v, %v", empty, err)
	}
}

func TestDefaultGeneratorFromFourGoroutines(t *testing.T) {
	generate(t, NextID)
	ids, err := NextIDs(500)
	if err != nil || len(ids) != 500 || ids[0] >= ids[499] {
		t.Fatalf("NextIDs: %d IDs, %v", len(ids), err)
	}
}

func TestLeasedGeneratorsGetDistinctWorkers(t *testing.T) {
	dir := t.TempDir()
	a, err := New(Options{LeaseDir: String(dir)})
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(Options{LeaseDir: String(dir)})
	if err != nil {
		t.Fatal(err)
	}
	if a.Source() != "host_lease" || a.WorkerID() == b.WorkerID() && a.DatacenterID() == b.DatacenterID() {
		t.Fatalf("two leases: %s %d/%d and %d/%d", a.Source(), a.DatacenterID(), a.WorkerID(),
			b.DatacenterID(), b.WorkerID())
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatalf("closing twice: %v", err)
	}
	if _, err := a.NextID(); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("NextID after Close: %v", err)
	}
	if _, err := b.NextID(); err != nil {
		t.Fatal(err)
	}
	b.Close()
}

func TestDecodeVectors(t *testing.T) {
	cases := []struct {
		layout string
		id     int64
		want   Parts
	}{
		{"discord", 175928847299117063, Parts{TimestampMs: 1462015105796, DatacenterID: 1, Sequence: 7}},
		{"twitter", 1541815603606036480, Parts{TimestampMs: 1656432460105, DatacenterID: 11, WorkerID: 26}},
	}
	for _, c := range cases {
		got, err := Decode(c.layout, c.id)
		if err != nil || got.TimestampMs != c.want.TimestampMs || got.DatacenterID != c.want.DatacenterID ||
			got.WorkerID != c.want.WorkerID || got.Sequence != c.want.Sequence || got.Fields != nil {
			t.Errorf("Decode(%q, %d) = %+v, %v; want %+v", c.layout, c.id, got, err, c.want)
		}
		back, err := Compose(c.layout, got)
		if err != nil || back != c.id {
			t.Errorf("Compose(%q, %+v) = %d, %v; want %d", c.layout, got, back, err, c.id)
		}
	}
	if got := (Parts{TimestampMs: 1462015105796}).Time().UTC().Format("2006-01-02T15:04:05.000Z"); got != "2016-04-30T11:18:25.796Z" {
		t.Errorf("Time() = %s", got)
	}
}

func TestConstantFields(t *testing.T) {
	const vesta = "vesta-min-granularity" // version:1,type:1=1,method:2,...
	id, err := Compose(vesta, Parts{TimestampMs: 1700000000000, WorkerID: 5, Sequence: 3,
		Fields: map[string]uint64{"version": 0, "method": 2}})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]uint64{"version": 0, "type": 1, "method": 2, "worker": 5, "sequence": 3} {
		if got, err := DecodeField(vesta, id, name); err != nil || got != want {
			t.Errorf("DecodeField(%q) = %d, %v; want %d", name, got, err, want)
		}
	}
	if _, err := Compose(vesta, Parts{TimestampMs: 1700000000000, Fields: map[string]uint64{"colour": 1}}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("unknown constant: %v", err)
	}
}

func TestNormalizeLayout(t *testing.T) {
	if got, err := NormalizeLayout("time:41,datacenter:5,worker:5,sequence:12;epoch=1288834974657"); err != nil || got != "twitter" {
		t.Errorf("NormalizeLayout = %q, %v", got, err)
	}
}

func TestErrors(t *testing.T) {
	_, err := Decode("nonsense", 1)
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeInvalidLayout || !strings.Contains(e.Message, "nonsense") {
		t.Errorf("bad layout: %v", err)
	}
	if !errors.Is(err, ErrInvalidLayout) || errors.Is(err, ErrInvalidArgument) {
		t.Errorf("errors.Is on %v", err)
	}
	if !strings.HasPrefix(err.Error(), "flakery: invalid_layout: ") {
		t.Errorf("Error() = %q", err.Error())
	}
	_, err = Decode("twitter", -1)
	if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "negative") {
		t.Errorf("negative ID: %v", err)
	}
	_, err = New(Options{Layout: String("twitter"), WorkerID: Uint64(99)})
	if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "99") {
		t.Errorf("worker 99: %v", err)
	}
	_, err = New(Options{Layout: String("twitter"), WorkerID: Uint64(1), SequencePolicy: 7})
	if !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("sequence policy 7: %v", err)
	}
	if _, err := NextIDs(-1); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("NextIDs(-1): %v", err)
	}
	_, err = Compose("twitter", Parts{TimestampMs: 1700000000000, WorkerID: 1 << 10})
	if !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("worker 1024 in 10 bits: %v", err)
	}
}

// The message read after a failure is that failure's, even with other goroutines failing
// differently at the same time (the C library keeps it per OS thread).
func TestErrorMessagesFromManyGoroutines(t *testing.T) {
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 2000; j++ {
				if i%2 == 0 {
					if _, err := Decode("nonsense", 1); !strings.Contains(err.Error(), "nonsense") {
						t.Errorf("layout error read as %v", err)
						return
					}
				} else if _, err := Decode("twitter", -1); !strings.Contains(err.Error(), "negative") {
					t.Errorf("argument error read as %v", err)
					return
				}
			}
		}(i)
	}
	wg.Wait()
}

// Discord IDs of 2^63 and above (tests/vectors/unsigned.json, from @sapphire/snowflake).
func TestUnsignedDiscordIDs(t *testing.T) {
	text, err := os.ReadFile("../tests/vectors/unsigned.json")
	if err != nil {
		t.Fatal(err)
	}
	var vectors []struct {
		Layout       string `json:"layout"`
		ID           string `json:"id"`
		TimestampMs  int64  `json:"timestamp_ms"`
		DatacenterID uint64 `json:"datacenter_id"`
		WorkerID     uint64 `json:"worker_id"`
		Sequence     uint64 `json:"sequence"`
	}
	if err := json.Unmarshal(text, &vectors); err != nil {
		t.Fatal(err)
	}
	above := 0
	for _, v := range vectors {
		id, err := strconv.ParseUint(v.ID, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		if id > math.MaxInt64 {
			above++
		}
		want := Parts{TimestampMs: v.TimestampMs, DatacenterID: v.DatacenterID, WorkerID: v.WorkerID, Sequence: v.Sequence}
		got, err := DecodeU64(v.Layout, id)
		if err != nil || got.TimestampMs != want.TimestampMs || got.DatacenterID != want.DatacenterID ||
			got.WorkerID != want.WorkerID || got.Sequence != want.Sequence {
			t.Errorf("DecodeU64(%q, %d) = %+v, %v; want %+v", v.Layout, id, got, err, want)
		}
		if back, err := ComposeU64(v.Layout, got); err != nil || back != id {
			t.Errorf("ComposeU64 = %d, %v; want %d", back, err, id)
		}
	}
	if above == 0 {
		t.Fatal("no vector above 2^63-1")
	}
	if _, err := DecodeU64("twitter", 1<<63); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("a signed layout took 2^63: %v", err)
	}
	left, err := LayoutTimeLeft("twitter")
	end := time.UnixMilli(3487858230209) // twitter's 41 bits run out
	if err != nil || left <= 0 || left > time.Until(end)+time.Second {
		t.Errorf("LayoutTimeLeft(twitter) = %v, %v", left, err)
	}
	if left, err := LayoutTimeLeft("baidu"); err != nil || left != 0 {
		t.Errorf("LayoutTimeLeft(baidu) = %v, %v; want 0", left, err)
	}
}
