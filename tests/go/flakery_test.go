package flakery

import (
	"errors"
	"sort"
	"strings"
	"sync"
	"testing"
)

func TestVersion(t *testing.T) {
	if Version() == "" {
		t.Fatal("empty version")
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
	worker := uint64(9)
	g, err := NewGenerator(Options{Layout: "twitter", WorkerID: &worker})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	generate(t, g.NextID)

	id, err := g.NextID()
	if err != nil {
		t.Fatal(err)
	}
	p, err := Decode("twitter", id)
	if err != nil || p.WorkerID != 9 {
		t.Fatalf("decode of a new ID: %+v, %v", p, err)
	}
	ids, err := g.NextIDs(1000)
	if err != nil || len(ids) != 1000 || ids[0] <= id {
		t.Fatalf("NextIDs: %v", err)
	}
}

func TestDefaultGeneratorFromFourGoroutines(t *testing.T) {
	generate(t, NextID)
}

func TestDecodeVectors(t *testing.T) {
	cases := []struct {
		layout string
		id     int64
		want   Parts
	}{
		{"discord", 175928847299117063, Parts{1462015105796, 1, 0, 7}},
		{"twitter", 1541815603606036480, Parts{1656432460105, 11, 26, 0}},
	}
	for _, c := range cases {
		got, err := Decode(c.layout, c.id)
		if err != nil || got != c.want {
			t.Errorf("Decode(%q, %d) = %+v, %v; want %+v", c.layout, c.id, got, err, c.want)
		}
	}
}

func TestErrors(t *testing.T) {
	_, err := Decode("nonsense", 1)
	var e *Error
	if !errors.As(err, &e) || e.Code != "invalid_layout" || !strings.Contains(e.Message, "nonsense") {
		t.Errorf("bad layout: %v", err)
	}
	_, err = Decode("twitter", -1)
	if !errors.As(err, &e) || e.Code != "invalid_argument" || !strings.Contains(e.Message, "negative") {
		t.Errorf("negative ID: %v", err)
	}
	worker := uint64(99)
	_, err = NewGenerator(Options{Layout: "twitter", WorkerID: &worker})
	if !errors.As(err, &e) || e.Code != "invalid_argument" || !strings.Contains(e.Message, "99") {
		t.Errorf("worker 99: %v", err)
	}
}
