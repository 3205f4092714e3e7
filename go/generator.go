package flakery

/*
#include <stdlib.h>
#include "flakery.h"
*/
import "C"

import (
	"runtime"
	"sync/atomic"
	"unsafe"
)

// SequencePolicy says what a generator does when a tick's sequence numbers are used up.
type SequencePolicy int32

const (
	// SequenceWait waits for the next tick (the default).
	SequenceWait SequencePolicy = C.FLAKERY_SEQUENCE_POLICY_WAIT
	// SequenceBorrow uses ticks ahead of the clock, at most MaxBorrowMs ahead, then waits.
	SequenceBorrow SequencePolicy = C.FLAKERY_SEQUENCE_POLICY_BORROW
)

// Options configure New. The zero value is every default: the layout from FLAKERY_LAYOUT
// (else "twitter") and the node identity from ZooKeeper, a database, the environment or a
// host-local lease, in that order of what is configured. Pointer fields are "not given" when
// nil (see Uint64 and String), so that 0 and "" are always the caller's: the core judges them
// as it judges Python's or C's (an empty Namespace, Layout, DatabaseURL or DatabaseMode is
// ErrInvalidArgument or ErrInvalidLayout, with the same message). A string with a NUL byte is
// ErrInvalidArgument (a C string would end there).
type Options struct {
	// Layout is a preset name ("twitter", "discord;epoch=2015-01-01T00:00:00Z") or a field
	// list ("time:41,worker:10,sequence:12;epoch=1288834974657").
	Layout *string
	// DatacenterID and WorkerID fix the node identity. A field that is not fixed is leased.
	DatacenterID *uint64
	WorkerID     *uint64
	// SequencePolicy is SequenceWait (the default) or SequenceBorrow.
	SequencePolicy SequencePolicy
	// MaxBorrowMs bounds how far ahead of the clock SequenceBorrow may go (default 1000).
	MaxBorrowMs *uint64
	// BackwardsToleranceMs: a clock step back up to this is waited out, a larger one fails
	// with ErrClockMovedBackwards (default 1000).
	BackwardsToleranceMs *uint64
	// RandomSequenceStart starts each tick's sequence at a random value instead of 0.
	RandomSequenceStart bool
	// Fields are the values of constant fields of the layout (Vesta's "version", ...).
	Fields map[string]uint64
	// ZooKeeper is a connect string with an optional chroot ("127.0.0.1:2181/flakery") to
	// lease the node ID from (default FLAKERY_ZOOKEEPER).
	ZooKeeper *string
	// Namespace is the ZooKeeper namespace of the leases (default FLAKERY_NAMESPACE, else
	// "default").
	Namespace *string
	// SessionTimeoutMs is the ZooKeeper session timeout, at least 1 (nil:
	// FLAKERY_SESSION_TIMEOUT_MS, else 10000). 0 is ErrInvalidArgument, as on every surface.
	SessionTimeoutMs *uint64
	// LeaseDir is the directory of host-local lease files (default FLAKERY_LEASE_DIR).
	LeaseDir *string
	// DatabaseURL leases the node ID from PostgreSQL or MySQL/MariaDB ("postgres://...",
	// "mysql://..."; default FLAKERY_DATABASE_URL). Its password never appears in an error.
	DatabaseURL *string
	// DatabaseMode is "lease" (the default) or "baidu": one new row of Baidu's WORKER_NODE
	// table per start, its ID the worker ID (default FLAKERY_DATABASE_MODE).
	DatabaseMode *string
}

// Uint64 returns a pointer to v, for the optional fields of Options.
func Uint64(v uint64) *uint64 { return &v }

// String returns a pointer to v, for the optional fields of Options and ClientOptions.
func String(v string) *string { return &v }

// fill writes o into opts, its strings copied into mem (for C, until mem is freed).
func (o Options) fill(opts *C.flakery_options, mem *cMem) error {
	if len(o.Fields) > 1<<16 {
		return invalidArgument("too many constant fields")
	}
	if err := call(func() C.flakery_status { return C.flakery_options_init(opts) }); err != nil {
		return err
	}
	if o.Layout != nil {
		opts.layout = mem.add("Layout", *o.Layout)
	}
	if o.DatacenterID != nil {
		opts.has_datacenter_id = true
		opts.datacenter_id = C.uint64_t(*o.DatacenterID)
	}
	if o.WorkerID != nil {
		opts.has_worker_id = true
		opts.worker_id = C.uint64_t(*o.WorkerID)
	}
	opts.sequence_policy = C.int32_t(o.SequencePolicy)
	if o.MaxBorrowMs != nil {
		opts.max_borrow_ms = C.uint64_t(*o.MaxBorrowMs)
	}
	if o.BackwardsToleranceMs != nil {
		opts.backwards_tolerance_ms = C.uint64_t(*o.BackwardsToleranceMs)
	}
	opts.random_sequence_start = C.bool(o.RandomSequenceStart)
	opts.field_names, opts.field_values, opts.field_count = mem.fields("Fields", o.Fields)
	if o.ZooKeeper != nil {
		opts.zookeeper = mem.add("ZooKeeper", *o.ZooKeeper)
	}
	if o.Namespace != nil {
		opts.namespace_ = mem.add("Namespace", *o.Namespace)
	}
	if o.SessionTimeoutMs != nil {
		opts.session_timeout_ms = C.uint64_t(*o.SessionTimeoutMs)
	}
	if o.LeaseDir != nil {
		opts.lease_dir = mem.add("LeaseDir", *o.LeaseDir)
	}
	if o.DatabaseURL != nil {
		opts.database_url = mem.add("DatabaseURL", *o.DatabaseURL)
	}
	if o.DatabaseMode != nil {
		opts.database_mode = mem.add("DatabaseMode", *o.DatabaseMode)
	}
	return nil
}

// afterFree, set by tests, is called after a finalizer has freed a generator's handle.
var afterFree atomic.Pointer[func()]

// handlesFreed counts the generators' and clients' handles their finalizers have freed, so
// that a memory test can wait for every one it made before it reads the C heap.
var handlesFreed atomic.Int64

// Generator makes IDs under one layout and node identity. It is safe for concurrent use by
// any number of goroutines: IDs are unique across them and increase on each.
type Generator struct {
	ptr *C.flakery_generator
}

// New makes a generator. Close it when done, to give its node ID lease back at once; the
// memory is released when the generator is garbage collected.
func New(o Options) (*Generator, error) {
	var opts C.flakery_options
	// The database URL (its password) and every other string are wiped from C memory by free.
	var mem cMem
	defer mem.free()
	if err := o.fill(&opts, &mem); err != nil {
		return nil, err
	}

	var ptr *C.flakery_generator
	if err := mem.call(func() C.flakery_status { return C.flakery_generator_new(&opts, &ptr) }); err != nil {
		return nil, err
	}
	g := &Generator{ptr: ptr}
	// The handle is freed only when no goroutine can reach g any more, so never while a call
	// on it runs (each method keeps g alive until its C call has returned).
	// Freeing never blocks the finalizer goroutine: the core signals the release of a leased
	// node ID and returns, and its own threads finish it (docs/spec.md#the-generators-slow-path).
	runtime.SetFinalizer(g, func(g *Generator) {
		C.flakery_generator_free(g.ptr)
		handlesFreed.Add(1)
		if f := afterFree.Load(); f != nil {
			(*f)()
		}
	})
	return g, nil
}

// Close gives the generator's node ID lease back now. Every later NextID on it fails with
// ErrLeaseLost. Closing twice is fine.
func (g *Generator) Close() error {
	err := call(func() C.flakery_status { return C.flakery_generator_close(g.ptr) })
	runtime.KeepAlive(g)
	return err
}

// NextID returns a new ID, larger than every ID this generator returned before. It blocks
// for at most one tick when the tick's sequence is used up, or for the backwards tolerance
// when the clock stepped back a little.
func (g *Generator) NextID() (int64, error) {
	var id C.int64_t
	err := call(func() C.flakery_status { return C.flakery_next_id(g.ptr, &id) })
	runtime.KeepAlive(g)
	return int64(id), err
}

// NextIDs returns n new IDs in increasing order. Whole runs of a tick's sequence numbers are
// reserved at once, so this is much cheaper per ID than n calls of NextID.
func (g *Generator) NextIDs(n int) ([]int64, error) {
	ids, err := nextIDs(n, func(out *C.int64_t, n C.size_t) C.flakery_status {
		return C.flakery_next_ids(g.ptr, out, n)
	})
	runtime.KeepAlive(g)
	return ids, err
}

// WorkerID is the generator's worker ID (0 when its layout has no worker field).
func (g *Generator) WorkerID() uint64 {
	var out C.uint64_t
	_ = call(func() C.flakery_status { return C.flakery_generator_worker_id(g.ptr, &out) })
	runtime.KeepAlive(g)
	return uint64(out)
}

// DatacenterID is the generator's datacenter ID (0 when its layout has no datacenter field).
func (g *Generator) DatacenterID() uint64 {
	var out C.uint64_t
	_ = call(func() C.flakery_status { return C.flakery_generator_datacenter_id(g.ptr, &out) })
	runtime.KeepAlive(g)
	return uint64(out)
}

// Source says where the node ID came from: "explicit", "environment", "hostname",
// "zookeeper", "database" or "host_lease".
func (g *Generator) Source() string {
	var out *C.char
	_ = call(func() C.flakery_status { return C.flakery_generator_source(g.ptr, &out) })
	runtime.KeepAlive(g)
	if out == nil {
		return ""
	}
	return C.GoString(out)
}

// Layout is the generator's layout as its canonical spec (a preset name where it is one).
func (g *Generator) Layout() string {
	text, _ := readString(func(buf *C.char, n C.size_t, written *C.size_t) C.flakery_status {
		return C.flakery_generator_layout(g.ptr, buf, n, written)
	})
	runtime.KeepAlive(g)
	return text
}

// Decode takes id apart under the generator's own layout.
func (g *Generator) Decode(id int64) (Parts, error) {
	var p C.flakery_parts
	err := call(func() C.flakery_status { return C.flakery_generator_decode(g.ptr, C.int64_t(id), &p) })
	runtime.KeepAlive(g)
	if err != nil {
		return Parts{}, err
	}
	return partsFromC(&p), nil
}

// NextID returns a new ID from the process-wide generator, made on first use from the
// environment (FLAKERY_LAYOUT, FLAKERY_WORKER_ID, FLAKERY_ZOOKEEPER, FLAKERY_LEASE_DIR, ...).
// A failure to make it is returned, and the next call tries again.
func NextID() (int64, error) {
	var id C.int64_t
	err := call(func() C.flakery_status { return C.flakery_next_id_default(&id) })
	return int64(id), err
}

// NextIDs returns n new IDs in increasing order from the process-wide generator.
func NextIDs(n int) ([]int64, error) {
	return nextIDs(n, func(out *C.int64_t, n C.size_t) C.flakery_status {
		return C.flakery_next_ids_default(out, n)
	})
}

// nextIDs makes a slice of n IDs and has f fill it.
func nextIDs(n int, f func(out *C.int64_t, n C.size_t) C.flakery_status) ([]int64, error) {
	if n < 0 {
		return nil, invalidArgument("n must not be negative")
	}
	ids := make([]int64, n)
	if n == 0 {
		return ids, nil
	}
	if err := call(func() C.flakery_status { return f((*C.int64_t)(unsafe.Pointer(&ids[0])), C.size_t(n)) }); err != nil {
		return nil, err
	}
	return ids, nil
}
