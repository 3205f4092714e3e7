// Package flakery calls the C API of flakery (include/flakery.h) through cgo, linked with the
// static library that `cargo build --release -p flakery-c` leaves in target/release. It is the
// Go example of the README and what tests/go/run.sh tests.
package flakery

/*
#cgo CFLAGS: -I${SRCDIR}/../../include
#cgo LDFLAGS: -L${SRCDIR}/../../target/release -l:libflakery.a -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
#include <stdlib.h>
#include "flakery.h"
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// Error is a failed call: Code is the code string of docs/spec.md#errors ("invalid_layout", ...).
type Error struct {
	Status  int
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// check turns a status into an error. The detailed message is per OS thread, so the caller
// must have locked its goroutine to the thread that made the call (see call).
func check(status C.flakery_status) error {
	if status == C.FLAKERY_STATUS_OK {
		return nil
	}
	return &Error{
		Status:  int(status),
		Code:    C.GoString(C.flakery_status_message(C.int32_t(status))),
		Message: C.GoString(C.flakery_last_error()),
	}
}

// call runs one C call and reads its error on the same OS thread.
func call(f func() C.flakery_status) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return check(f())
}

// Generator wraps a flakery_generator; it is safe for concurrent use by many goroutines.
type Generator struct{ ptr *C.flakery_generator }

// Options are the generator options of docs/spec.md#generator-options; nil pointers mean "not given".
type Options struct {
	Layout       string
	DatacenterID *uint64
	WorkerID     *uint64
}

// NewGenerator makes a generator; Close it when done.
func NewGenerator(o Options) (*Generator, error) {
	var opts C.flakery_options
	if err := call(func() C.flakery_status { return C.flakery_options_init(&opts) }); err != nil {
		return nil, err
	}
	if o.Layout != "" {
		layout := C.CString(o.Layout)
		defer C.free(unsafe.Pointer(layout))
		opts.layout = layout
	}
	if o.DatacenterID != nil {
		opts.has_datacenter_id = true
		opts.datacenter_id = C.uint64_t(*o.DatacenterID)
	}
	if o.WorkerID != nil {
		opts.has_worker_id = true
		opts.worker_id = C.uint64_t(*o.WorkerID)
	}
	g := &Generator{}
	err := call(func() C.flakery_status { return C.flakery_generator_new(&opts, &g.ptr) })
	if err != nil {
		return nil, err
	}
	return g, nil
}

// Close releases the generator; it must not be used afterwards.
func (g *Generator) Close() {
	C.flakery_generator_free(g.ptr)
	g.ptr = nil
}

// NextID returns a new ID.
func (g *Generator) NextID() (int64, error) {
	var id C.int64_t
	err := call(func() C.flakery_status { return C.flakery_next_id(g.ptr, &id) })
	return int64(id), err
}

// NextIDs returns n new IDs in increasing order.
func (g *Generator) NextIDs(n int) ([]int64, error) {
	ids := make([]int64, n)
	if n == 0 {
		return ids, nil
	}
	err := call(func() C.flakery_status {
		return C.flakery_next_ids(g.ptr, (*C.int64_t)(unsafe.Pointer(&ids[0])), C.size_t(n))
	})
	return ids, err
}

// NextID returns a new ID from the process-wide generator.
func NextID() (int64, error) {
	var id C.int64_t
	err := call(func() C.flakery_status { return C.flakery_next_id_default(&id) })
	return int64(id), err
}

// Parts is an ID taken apart.
type Parts struct {
	TimestampMs  int64
	DatacenterID uint64
	WorkerID     uint64
	Sequence     uint64
}

// Decode takes id apart under a layout ("twitter", "discord", ...).
func Decode(layout string, id int64) (Parts, error) {
	spec := C.CString(layout)
	defer C.free(unsafe.Pointer(spec))
	var p C.flakery_parts
	if err := call(func() C.flakery_status { return C.flakery_decode(spec, C.int64_t(id), &p) }); err != nil {
		return Parts{}, err
	}
	return Parts{int64(p.timestamp_ms), uint64(p.datacenter_id), uint64(p.worker_id), uint64(p.sequence)}, nil
}

// Version is the library's version.
func Version() string { return C.GoString(C.flakery_version()) }
